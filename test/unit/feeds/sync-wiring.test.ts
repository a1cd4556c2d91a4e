import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FEED_BODY } from '../../../src/contract/feeds.js';
import { OPEN_NETWORK } from '../../../src/feeds/network.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';
import { duckDbStoreOf } from '../../support/store-file.js';

// More than the store hands back in one chunk (2,048 rows), so that the items come in several.
const RECORDS = Array.from({ length: 5_000 }, (_, i) => ({ sku: `s${i}`, title: `product ${i}` }));

let dataDir: string;
let runtime: Runtime;
let server: http.Server;
let url: string;
/** What happened, in order: the source served, the lake's hold and its release, the sync's answer. */
let order: string[];

beforeEach(async () => {
  order = [];
  dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-sync-wiring-'));
  runtime = await openRuntime(dataDir, undefined, undefined, { feedNetwork: OPEN_NETWORK });
  server = http.createServer((_, res) => {
    order.push('served');
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ items: RECORDS }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/items`;
});
afterEach(async () => {
  await runtime.store.close();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dataDir, { recursive: true, force: true });
});

/** The tenant 'shop' with an active feed of RECORDS. */
async function activeFeed() {
  await createTenant(runtime, 'shop');
  const tenant = runtime.state.get('shop')!;
  const body = FEED_BODY.parse({
    sourceType: 'json_url',
    url,
    itemsPath: '$.items',
    itemIdPath: 'sku',
    mappingRules: [{ property: 'title', path: 'title', dataType: 'string', target: 'name' }],
  });
  const feed = await runtime.feeds.create(tenant, body);
  await runtime.feeds.preview(tenant, feed.id);
  await runtime.feeds.activate(tenant, feed.id);
  return { tenant, feed };
}

describe('a feed sync', () => {
  it('that fails after its apply says what it changed, not that nothing changed', async () => {
    const { tenant, feed } = await activeFeed();
    let taken = 0;
    const upsert = tenant.upsertCatalogItem.bind(tenant);
    vi.spyOn(tenant, 'upsertCatalogItem').mockImplementation((item) => {
      if (++taken > 100) throw new Error('out of memory, say');
      upsert(item);
    });
    const exported = vi.spyOn(runtime.lake, 'committed');
    await expect(runtime.feeds.sync(tenant, feed.id)).rejects.toThrow();
    // The lake follows the stored catalog, which changed.
    expect(exported).toHaveBeenCalledWith('shop');
    const { lastSync, state } = runtime.feeds.get(tenant, feed.id);
    expect(state).toBe('active');
    if (lastSync?.status !== 'failed') throw new Error(`the sync did not fail: ${JSON.stringify(lastSync)}`);
    expect(lastSync.message).toMatch(
      /^the sync was applied to the stored catalog \(5000 items upserted, 0 marked unavailable\), then failed/,
    );
    expect(lastSync.message).not.toMatch(/nothing changed|out of memory/);
    const stored = await duckDbStoreOf(runtime.store).read(
      async (db) =>
        (await db.runAndReadAll("SELECT count(*) FROM items WHERE tenant_id = 'shop'")).getRowsJS()[0][0],
    );
    expect(Number(stored)).toBe(RECORDS.length);
  });

  it("holds the tenant's lake exports until it answered, and hands its items to vector indexing at once", async () => {
    const { tenant, feed } = await activeFeed();
    order = [];
    const hold = runtime.lake.hold.bind(runtime.lake);
    vi.spyOn(runtime.lake, 'hold').mockImplementation((tenantId) => {
      order.push(`hold ${tenantId}`);
      const release = hold(tenantId);
      return () => {
        order.push(`release ${tenantId}`);
        release();
      };
    });
    const indexed = vi.spyOn(runtime.vectors, 'itemsChanged');

    const result = await runtime.feeds.sync(tenant, feed.id);
    order.push('answered');
    expect(result.upserted).toBe(RECORDS.length);
    expect(order).toEqual(['hold shop', 'served', 'release shop', 'answered']);
    expect(indexed).toHaveBeenCalledTimes(1);
    expect([...indexed.mock.calls[0][1]].sort()).toEqual(RECORDS.map((record) => record.sku).sort());
  });
});
