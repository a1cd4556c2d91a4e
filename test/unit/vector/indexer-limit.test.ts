import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { vectorsJob } from '../../../jobs/vectors/vectors-job.js';
import { publishModel } from '../../../src/artifacts/publish.js';
import { openRuntime } from '../../../src/runtime.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';
import { ServingState, type TenantState } from '../../../src/state/tenant-state.js';
import { VECTOR_DIMENSIONS } from '../../../src/vector/embedder.js';
import { HashingEmbedder } from '../../../src/vector/hashing-embedder.js';
import { VectorIndexer } from '../../../src/models/vector-indexer.js';
import { itemText, sortedTemplates } from '../../../src/vector/templates.js';
import { DELTA_ROWS_LIMIT, type VectorBase } from '../../../src/vector/tenant-vectors.js';
import { vectorTextHash } from '../../../src/vector/text-hash.js';
import { item } from '../../support/tenant-fixture.js';

const D = VECTOR_DIMENSIONS;
const OVER = 50;

function tenantWith(state: ServingState, count: number): TenantState {
  const tenant = state.add('t1');
  for (let i = 0; i < count; i++) {
    tenant.upsertItem(item(`i${i}`, { category: `c${i % 7}`, attributes: { name: `product number ${i}` } }));
  }
  return tenant;
}

/** A vectors base as the vectors job would build it, of the given items (as the indexer embeds them). */
async function baseOf(tenant: TenantState, embedder: HashingEmbedder, ids: number[]): Promise<VectorBase> {
  const sorted = sortedTemplates(tenant.config.embeddingTemplates);
  const { catalog } = tenant;
  const texts = ids.map((id) =>
    itemText(sorted, { category: catalog.categories[id], attributes: catalog.attributesOf(id) })!,
  );
  return {
    version: 1,
    builtAt: Date.now(),
    model: embedder.model,
    externalIds: ids.map((id) => catalog.externalIds[id]),
    hashes: Uint32Array.from(texts.map((text) => vectorTextHash(embedder.model, text))),
    matrix: await embedder.embed(texts),
    indexFiles: {},
  };
}

describe('the vector indexer with a full delta', () => {
  it('leaves a change larger than the room to the vectors build, embeds one that fits, and then what a build lacks', async () => {
    const count = DELTA_ROWS_LIMIT + OVER;
    const state = new ServingState();
    const tenant = tenantWith(state, count);
    const embedder = new HashingEmbedder();
    let told = 0;
    const indexer = new VectorIndexer(embedder, state, { error: () => undefined, embedded: () => told++ });
    indexer.tenantChanged(tenant);
    await indexer.idle();

    // More items changed than the delta has room for: none is embedded now, all wait for the build.
    const { vectors } = tenant;
    expect(vectors.deltaSize).toBe(0);
    expect(vectors.size).toBe(0);
    expect(vectors.awaitingBuild.size).toBe(count);
    expect(told).toBe(1);
    expect(indexer.backlog().get('t1')).toBe(count);
    const idRows = count * 4 * 2;
    expect(vectors.bytes.own).toBeLessThan(idRows + D * 4);

    // A build of the first OVER items: the rest fit the room exactly, and are embedded.
    const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
    tenant.replaceVectorBase(await baseOf(tenant, embedder, ids(0, OVER)));
    indexer.baseReplaced(tenant);
    expect(vectors.awaitingBuild.size).toBe(0);
    await indexer.idle();
    expect(vectors.deltaSize).toBe(DELTA_ROWS_LIMIT);
    expect(vectors.deltaRoom).toBe(0);
    expect(vectors.size).toBe(count);
    expect(indexer.backlog().get('t1')).toBeUndefined();
    // The delta grew to the limit and no further (doubling would have made room for 32,768 rows).
    const deltaBytes = DELTA_ROWS_LIMIT * (D * 4 + 8);
    expect(vectors.bytes.own).toBeLessThan(deltaBytes + idRows + D * 4);

    // With the delta full, an item whose text changed waits.
    tenant.upsertItem(item('i0', { attributes: { name: 'a new name' } }));
    indexer.itemsChanged(tenant, ['i0']);
    await indexer.idle();
    expect(vectors.awaitingBuild.size).toBe(1);
    // So do items sent to the embeddings helper (POST /index): one of the catalog waits, one not in it
    // yet is embedded once it is upserted.
    const sent = [
      { externalId: 'i1', attributes: { name: 'a text of its own' } },
      { externalId: 'not-yet', attributes: { name: 'a new product' } },
    ];
    expect(await indexer.indexItems(tenant, sent)).toBe(0);
    expect(vectors.deltaSize).toBe(DELTA_ROWS_LIMIT);
    expect(vectors.awaitingBuild.size).toBe(2);
    expect(tenant.catalog.idOf('not-yet')).toBe(-1);

    // The next build has every item but i0: i0 is embedded after it; i1's text in the catalog is there.
    tenant.replaceVectorBase(await baseOf(tenant, embedder, ids(1, count)));
    expect(vectors.deltaSize).toBe(0);
    indexer.baseReplaced(tenant);
    await indexer.idle();
    expect(vectors.deltaSize).toBe(1);
    expect(vectors.size).toBe(count);
    expect(vectors.awaitingBuild.size).toBe(0);
    expect(vectors.vectorOf(tenant.catalog.idOf('i0'))).toBeDefined();
  });

  it('decides on each change by itself, and counts every item not settled in the backlog meanwhile', async () => {
    const first = 15_000;
    const second = 6_000;
    const state = new ServingState();
    const tenant = tenantWith(state, first + second);
    const indexer = new VectorIndexer(new HashingEmbedder(), state);
    const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `i${from + i}`);
    // Together more than the delta's room, each alone not: the first is embedded, then the second finds
    // the room it left too small, and waits whole.
    indexer.itemsChanged(tenant, names(0, first));
    indexer.itemsChanged(tenant, names(first, first + second));
    let settled = false;
    const idle = indexer.idle().then(() => (settled = true));
    let lowest = Infinity;
    while (!settled) {
      lowest = Math.min(lowest, indexer.backlog().get('t1') ?? 0);
      await nextTurn();
    }
    await idle;
    expect(tenant.vectors.deltaSize).toBe(first);
    expect(tenant.vectors.awaitingBuild.size).toBe(second);
    // The second change was never out of the count while the first was embedded.
    expect(lowest).toBeGreaterThanOrEqual(second);
  });

  it('leaves the items of a change whose embedding failed to the vectors build', async () => {
    const state = new ServingState();
    const tenant = tenantWith(state, 300);
    const embedder = new HashingEmbedder();
    let calls = 0;
    const embed = embedder.embed.bind(embedder);
    embedder.embed = (texts) => (++calls === 2 ? Promise.reject(new Error('model broke')) : embed(texts));
    const errors: string[] = [];
    let told = 0;
    const indexer = new VectorIndexer(embedder, state, {
      error: (_, message) => errors.push(message),
      embedded: () => told++,
    });
    indexer.tenantChanged(tenant);
    await indexer.idle();
    expect(errors).toEqual(['embedding items failed']);
    expect(told).toBe(1);
    // The first batch got its vectors; every item of the change waits for the build all the same.
    expect(tenant.vectors.deltaSize).toBe(128);
    expect(tenant.vectors.awaitingBuild.size).toBe(300);
    expect(indexer.backlog().get('t1')).toBe(300);
  });

  it('looks at the waiting items again once the daemon swaps a vectors build in', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-awaiting-'));
    const runtime = await openRuntime(dataDir);
    try {
      await createTenant(runtime, 'shop');
      const tenant = runtime.state.get('shop')!;
      tenant.upsertItem(item('kettle', { attributes: { name: 'stainless steel kettle' } }));
      const kettle = tenant.catalog.idOf('kettle');
      tenant.vectors.awaitingBuild.add(kettle);
      // A vectors build that lacks the kettle (it came after the build's lake was read).
      const lake = await LakeDb.scratch();
      await lake.db.run(
        `CREATE OR REPLACE VIEW items AS SELECT * FROM (VALUES ('mug', NULL, '{"name":"a mug"}')) AS t(external_id, category, attributes)`,
      );
      lake.location = { dataDir, tenantId: 'shop' };
      const built = await vectorsJob.build(
        lake,
        { ...vectorsJob.defaults, modelDir: null },
        { now: Date.now(), threads: 1 },
      );
      lake.close();
      publishModel(dataDir, 'shop', 'vectors', built, 1);
      expect(await runtime.loader.poll()).toBeGreaterThan(0);
      expect(tenant.vectors.baseRows).toBe(1);
      expect(tenant.vectors.awaitingBuild.size).toBe(0);
      await runtime.vectors.idle();
      expect(tenant.vectors.vectorOf(kettle)).toBeDefined();
    } finally {
      await runtime.store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
