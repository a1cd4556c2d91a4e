import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { JOBS } from '../../../jobs/registry.js';
import { MODEL_NAMES } from '../../../src/artifacts/layout.js';
import { publishModel } from '../../../src/artifacts/publish.js';
import { loadModel } from '../../../src/models/model-loader.js';
import { ServingState } from '../../../src/state/tenant-state.js';
import { item } from '../../support/tenant-fixture.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
let lake: LakeDb | undefined;
let dataDir: string | undefined;
afterEach(() => {
  lake?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The one model contract: every model has a job, and what it builds the daemon's loader accepts. */
describe.each(MODEL_NAMES)('the %s job', (model) => {
  const job = JOBS[model]!;

  it('exists, and builds an artifact the loader takes, from a lake with events', async () => {
    expect(job.model).toBe(model);
    lake = await LakeDb.scratch();
    const events = ['u1', 'u2', 'u3'].flatMap((user, u) =>
      ['a', 'b', 'c'].slice(0, u + 1).map((id) => ({ user, item: id, ts: NOW - 60_000 })),
    );
    await lake.appendViews(events);
    const built = await job.build(lake, { ...job.defaults }, { now: NOW, threads: 1 });
    // Vectors are built from the items (none here), the other models from the events.
    expect(built.source).toMatchObject(
      model === 'vectors' ? { interactions: 0, users: 0, items: 0 } : { interactions: 6, users: 3 },
    );
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-job-'));
    const manifest = publishModel(dataDir, 't1', model, built, 1);
    const tenant = new ServingState().add('t1');
    for (const id of ['a', 'b', 'c']) tenant.upsertItem(item(id));
    expect(loadModel(dataDir, tenant, model, manifest.version).version).toBe(manifest.version);
  });

  it('builds an empty model from an empty lake', async () => {
    lake = await LakeDb.scratch();
    const built = await job.build(lake, { ...job.defaults }, { now: NOW, threads: 1 });
    expect(built.source).toEqual({ interactions: 0, users: 0, items: 0 });
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-job-'));
    const manifest = publishModel(dataDir, 't1', model, built, 1);
    expect(() => loadModel(dataDir!, new ServingState().add('t1'), model, manifest.version)).not.toThrow();
  });
});
