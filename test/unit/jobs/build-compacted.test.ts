import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildTenant } from '../../../jobs/build.js';
import { cooccurrenceJob } from '../../../jobs/item-models/cooccurrence.js';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { coveredSegments, liveSegments, tableDir } from '../../../src/lake/layout.js';
import { exportTenantLake, type CompactionOptions } from '../../../src/store/lake-export.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

const TENANT = 'shop';
const NOW = Date.now();
/** Exports without merging. */
const KEEP: CompactionOptions = { smallBytes: 1 << 30, maxSegments: 16, graceMs: 3_600_000 };

let temp: TempStore;
beforeEach(async () => (temp = await openTempStore('nextrec-build-compacted-')));
afterEach(async () => {
  vi.restoreAllMocks();
  await closeTempStore(temp);
});

/** Commits `count` views of users u0..u9 on items i0..i4, from event `first` on. */
async function views(first: number, count: number): Promise<void> {
  await temp.store.writes.submit((rows) => {
    for (let n = first; n < first + count; n++) {
      const event = storedInteraction(`e${n}`, {
        userId: `u${n % 10}`,
        itemId: `i${n % 5}`,
        ts: NOW - 1_000,
      });
      rows.interactions.push([TENANT, event]);
    }
    return () => undefined;
  });
}

/** Merges the table's segments into one and removes the merged-away ones at once, as a minute later. */
async function compactAway(): Promise<void> {
  const now = { ...KEEP, maxSegments: 1, graceMs: 0 };
  await exportTenantLake(temp.store, temp.dir, TENANT, now);
  await exportTenantLake(temp.store, temp.dir, TENANT, now);
}

describe('a build whose lake files are compacted away while it reads them', () => {
  it('reads the lake again and builds from every event', async () => {
    await views(0, 40);
    await exportTenantLake(temp.store, temp.dir, TENANT, KEEP);
    await views(40, 40);
    await exportTenantLake(temp.store, temp.dir, TENANT, KEEP);
    const dir = tableDir(temp.dir, TENANT, 'interactions');
    expect(liveSegments(dir)).toHaveLength(2);

    // The build lists two segments; a merge then replaces them before it reads them.
    const open = LakeDb.open.bind(LakeDb);
    const opening = vi.spyOn(LakeDb, 'open').mockImplementation(async (...args) => {
      const lake = await open(...args);
      if (opening.mock.calls.length === 1) await compactAway();
      return lake;
    });
    const [result] = await buildTenant(temp.dir, TENANT, ['cooccurrence'], { now: NOW });

    expect(liveSegments(dir)).toHaveLength(1);
    expect(coveredSegments(dir)).toHaveLength(0);
    expect(opening).toHaveBeenCalledTimes(2);
    expect(result.manifest.source.interactions).toBe(80);
  });

  it('fails as before when no file it read is gone', async () => {
    await views(0, 40);
    await exportTenantLake(temp.store, temp.dir, TENANT, KEEP);
    const opening = vi.spyOn(LakeDb, 'open');
    vi.spyOn(cooccurrenceJob, 'build').mockRejectedValue(new Error('out of memory, say'));
    await expect(buildTenant(temp.dir, TENANT, ['cooccurrence'], { now: NOW })).rejects.toThrow(
      'out of memory, say',
    );
    expect(opening).toHaveBeenCalledTimes(1);
  });
});
