import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDiskFull, isStoreInvalidated } from '../../../src/store/disk-full.js';
import { DuckDbStore } from '../../../src/store/database.js';
import { storedEventIds, storedInteraction } from '../../support/temp-store.js';

/**
 * The store on a full disk (docs/configuration.md, "Health and metrics"): a checkpoint that cannot write the store file
 * makes DuckDB refuse every statement until the file is opened again. The store opens it again by itself,
 * keeps what was committed, and takes writes again once space returns. The data dir is a small tmpfs
 * (CI runs as root); a filler file takes its room.
 */

let dir: string;
let mounted = false;
let store: DuckDbStore;
const filler = () => path.join(dir, 'filler');

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-store-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(
      `this test mounts a tmpfs, which needs root (CI runs as root): ${(error as Error).message}`,
    );
  }
  mounted = true;
  store = await DuckDbStore.open(dir);
});

afterAll(async () => {
  await store?.close();
  if (mounted) execFileSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
});

/** Commits `count` interactions (ids `<prefix>-<n>`) with long item ids, through the log into the store. */
async function write(prefix: string, count: number): Promise<void> {
  await store.writes.submit((rows) => {
    for (let n = 0; n < count; n++)
      rows.interactions.push([
        't',
        storedInteraction(`${prefix}-${n}`, { itemId: `i-${n}-${'x'.repeat(100)}` }),
      ]);
    return () => undefined;
  });
  await store.writes.settled();
}

describe('a full disk', () => {
  it("is told by Node's code or by DuckDB's message, not by a wrapping error's cause", () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(isDiskFull(enospc)).toBe(true);
    expect(isDiskFull(Object.assign(new Error('quota'), { code: 'EDQUOT' }))).toBe(true);
    expect(
      isDiskFull(
        new Error(
          'TransactionContext Error: Failed to commit: Could not write file "x.wal": No space left on device',
        ),
      ),
    ).toBe(true);
    expect(
      isDiskFull(new Error('the sync was applied, then failed: No space left on device', { cause: enospc })),
    ).toBe(false);
    expect(isDiskFull(new Error('Constraint Error: duplicate key'))).toBe(false);
    expect(isDiskFull('No space left on device')).toBe(false);
    expect(
      isStoreInvalidated(
        new Error('FATAL Error: Failed: database has been invalidated because of a previous fatal error'),
      ),
    ).toBe(true);
  });
});

describe('a store on a full disk', () => {
  it('opens its file again after a checkpoint that could not write it, and writes once space returns', async () => {
    await write('before', 30_000);
    // What was committed is in the write-ahead log; the room left cannot take it into the file.
    const { bavail, bsize } = statfsSync(dir);
    writeFileSync(filler(), Buffer.alloc(bavail * bsize - 64 * 1024));

    const checkpoint = await store.releaseCache(0).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDiskFull(checkpoint) || isStoreInvalidated(checkpoint), String(checkpoint)).toBe(true);
    expect(store.disk.isFull).toBe(true);
    expect(await store.disk.report()).toBe('full');
    await expect(write('refused', 30_000)).rejects.toThrow();

    rmSync(filler());
    // Room came back: readiness says so before any write.
    expect(await store.disk.report()).toBe('ok');
    // The first write may meet the store before it was opened again; a later one is committed.
    let committed = false;
    for (let attempt = 0; attempt < 20 && !committed; attempt++) {
      committed = await write(`after-${attempt}`, 10).then(
        () => true,
        () => false,
      );
    }
    expect(committed).toBe(true);
    expect(store.disk.isFull).toBe(false);
    const stored = await storedEventIds(store);
    expect(stored.filter((id) => id.startsWith('before-'))).toHaveLength(30_000);
    expect(stored.filter((id) => id.startsWith('refused-'))).toEqual([]);
  }, 60_000);
});
