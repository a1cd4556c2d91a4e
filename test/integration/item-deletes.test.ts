import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACTORS } from '../../src/artifacts/formats.js';
import { currentVersion, modelDir, versions } from '../../src/artifacts/layout.js';
import { openCurrent } from '../../src/artifacts/open.js';
import { publishModel } from '../../src/artifacts/publish.js';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';
import { filesNaming, filesUnder, lakeFiles, storeFiles } from '../support/data-files.js';
import { modelCaughtUp } from '../support/models.js';

let daemon: DaemonProcess;
let headers: Record<string, string>;

/** Ids no other id contains, so that finding the bytes in a file means the item or user is there. */
const GONE = 'gone-item-4f7c';
const GONE_USER = 'gone-user-8d2b';
const ITEMS = [
  ...Array.from({ length: 12 }, (_, i) => ({
    externalId: `i${i}`,
    category: i < 6 ? 'shirts' : 'shoes',
    attributes: { color: 'red', price: 10 + i },
  })),
  { externalId: GONE, category: 'shirts', attributes: { color: 'red', price: 99 } },
];

const artifactFiles = () => filesUnder(path.join(daemon.dataDir, 'artifacts', 'shop'));

async function ok(method: string, route: string, body?: object) {
  const response = await call(daemon.url, method, route, { headers, body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/**
 * Publishes a factor model naming the gone item and user into the daemon's data dir, as a build would:
 * kept versions of it must stop naming them once they are deleted.
 */
function publishFactors(): void {
  const items = ['i0', 'i1', GONE, 'i2'];
  const users = ['u0', GONE_USER, 'u1'];
  const model = FACTORS.encode({
    factors: 2,
    items,
    itemFactors: Float32Array.from(items.flatMap((_, i) => [i + 1, 0.5])),
    users,
    userFactors: Float32Array.from(users.flatMap((_, u) => [0.25, u + 1])),
  });
  publishModel(
    daemon.dataDir,
    'shop',
    'factors',
    { ...model, parameters: { factors: 2 }, source: { interactions: 9, users: 3, items: 4 } },
    1,
  );
}

beforeAll(async () => {
  daemon = await startDaemonProcess();
  headers = tenantHeaders(await createTenant(daemon.url, 'shop'));
  await ok('POST', '/ingestion/items', { items: ITEMS });
  const interactions = [];
  for (let u = 0; u < 6; u++) {
    const userId = u === 0 ? GONE_USER : `u${u}`;
    for (const itemId of [GONE, 'i1', 'i2', `i${3 + u}`]) interactions.push({ userId, itemId, type: 'view' });
  }
  await ok('POST', '/ingestion/interactions', { interactions });
  await ok('POST', '/ingestion/impressions', {
    impressions: [
      { userId: 'u1', itemIds: ['i1', GONE, 'i2'], scenarioSlug: 'home' },
      { userId: 'u1', itemIds: [GONE] },
    ],
  });
  // A co-occurrence model built from those events names the item, as do the factor versions kept.
  await modelCaughtUp(daemon.url, 'shop');
  publishFactors();
  publishFactors();
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  removeDataDir(daemon.dataDir);
});

describe('deleting an item', () => {
  it('serves the item before the delete, from the catalog, recommendations and the lake', async () => {
    expect((await call(daemon.url, 'GET', `/catalog/items/${GONE}`, { headers })).status).toBe(200);
    const similar = await ok('GET', '/recommendations/item-to-item/i1?count=10');
    expect(similar.items.map((item: { itemId: string }) => item.itemId)).toContain(GONE);
    const lake = await call(daemon.url, 'POST', '/lake/export', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { tenantId: 'shop' },
    });
    expect(lake.status).toBe(200);
    // What must be gone afterwards is there now, so that its absence then means something.
    expect(filesNaming(GONE, await storeFiles(daemon.dataDir)).length).toBeGreaterThan(0);
    expect(filesNaming(GONE, lakeFiles(daemon.dataDir, 'shop')).length).toBeGreaterThan(0);
    expect(filesNaming(GONE, artifactFiles()).length).toBeGreaterThan(0);
    expect(versions(modelDir(daemon.dataDir, 'shop', 'factors'))).toHaveLength(2);
  });

  it('removes every trace of it: store file, lake, model versions, serving state', async () => {
    const before = await ok('GET', '/users/u1/export');
    const factorsBefore = currentVersion(modelDir(daemon.dataDir, 'shop', 'factors'))!;
    const deleted = await call(daemon.url, 'DELETE', `/catalog/items/${GONE}`, { headers });
    expect(deleted.status).toBe(204);

    expectError(await call(daemon.url, 'GET', `/catalog/items/${GONE}`, { headers }), 404, 'NOT_FOUND');
    expectError(
      await call(daemon.url, 'GET', `/recommendations/item-to-item/${GONE}`, { headers }),
      404,
      'ITEM_NOT_FOUND',
    );
    const similar = await ok('GET', '/recommendations/item-to-item/i1?count=10');
    expect(similar.items.map((item: { itemId: string }) => item.itemId)).not.toContain(GONE);
    const listed = await ok('GET', '/catalog/items?limit=100');
    expect(listed.total).toBe(ITEMS.length - 1);

    // Nothing of it in any file of the data dir: store, logs, lake, artifacts.
    expect((await storeFiles(daemon.dataDir)).length).toBeGreaterThan(0);
    expect(filesNaming(GONE, filesUnder(daemon.dataDir))).toEqual([]);

    // Its events went; the others stayed, an impression keeping the other items it showed.
    const after = await ok('GET', '/users/u1/export');
    const itemsOf = (body: { interactions: { itemId: string }[] }) => body.interactions.map((e) => e.itemId);
    expect(itemsOf(after)).toEqual(itemsOf(before).filter((itemId) => itemId !== GONE));
    expect(after.impressions.map((impression: { itemIds: string[] }) => impression.itemIds)).toEqual([
      ['i1', 'i2'],
    ]);

    // The factor model serving was published again without it; the older version naming it is gone.
    const factorsDir = modelDir(daemon.dataDir, 'shop', 'factors');
    const current = currentVersion(factorsDir)!;
    expect(current).toBeGreaterThan(factorsBefore);
    expect(versions(factorsDir)).toEqual([current]);
    const served = FACTORS.decode(openCurrent(daemon.dataDir, 'shop', 'factors')!);
    expect(served.items).toEqual(['i0', 'i1', 'i2']);
    expect(Array.from(served.itemFactors)).toEqual([1, 0.5, 2, 0.5, 4, 0.5]);
    expect(served.users).toEqual(['u0', GONE_USER, 'u1']);
  });

  it('answers 404 ITEM_NOT_FOUND for an id it does not know, and for a second delete', async () => {
    expectError(
      await call(daemon.url, 'DELETE', `/catalog/items/${GONE}`, { headers }),
      404,
      'ITEM_NOT_FOUND',
    );
    expectError(
      await call(daemon.url, 'DELETE', '/catalog/items/never-was', { headers }),
      404,
      'ITEM_NOT_FOUND',
    );
  });

  it('takes the item back as a new one when it is upserted again', async () => {
    await ok('POST', '/ingestion/items', { items: [{ externalId: GONE, category: 'shoes' }] });
    const item = await ok('GET', `/catalog/items/${GONE}`);
    expect(item).toMatchObject({ externalId: GONE, category: 'shoes', attributes: {} });
    expect((await call(daemon.url, 'DELETE', `/catalog/items/${GONE}`, { headers })).status).toBe(204);
    expect(filesNaming(GONE, filesUnder(daemon.dataDir))).toEqual([]);
  });
});

describe('deleting a user', () => {
  it('leaves no kept model version naming the user', async () => {
    expect(filesNaming(GONE_USER, artifactFiles()).length).toBeGreaterThan(0);
    expect((await call(daemon.url, 'DELETE', `/users/${GONE_USER}`, { headers })).status).toBe(204);
    expect(filesNaming(GONE_USER, filesUnder(daemon.dataDir))).toEqual([]);
    const served = FACTORS.decode(openCurrent(daemon.dataDir, 'shop', 'factors')!);
    expect(served.users).toEqual(['u0', 'u1']);
    expect(Array.from(served.userFactors)).toEqual([0.25, 1, 0.25, 3]);
  });
});

describe('bulk operations', () => {
  it('validates the filter', async () => {
    const post = (route: string, body: object) => call(daemon.url, 'POST', route, { headers, body });
    const bad = "'price' >";
    expectError(
      await post('/catalog/items/bulk-update', { filter: bad, set: {} }),
      400,
      'INVALID_EXPRESSION',
    );
    expectError(await post('/catalog/items/bulk-delete', { filter: bad }), 400, 'INVALID_EXPRESSION');
    expectError(await post('/catalog/items/bulk-update', { filter: 'true' }), 400, 'INVALID_BODY');
    expectError(await post('/catalog/items/bulk-delete', {}), 400, 'INVALID_BODY');
  });

  it('updates the items a filter matches: availability, category, attributes merged', async () => {
    const updated = await ok('POST', '/catalog/items/bulk-update', {
      filter: "'category' = \"shirts\" and 'price' >= 13",
      set: { available: false, attributes: { color: null, sale: true } },
    });
    expect(updated).toEqual({ updated: 3 });
    expect(await ok('GET', '/catalog/items/i3')).toMatchObject({
      category: 'shirts',
      available: false,
      attributes: { price: 13, sale: true },
    });
    expect((await ok('GET', '/catalog/items/i3')).attributes).not.toHaveProperty('color');
    expect(await ok('GET', '/catalog/items/i1')).toMatchObject({
      available: true,
      attributes: { color: 'red' },
    });
    const recommended = await ok('GET', '/recommendations/user-to-item/u5?count=20');
    expect(recommended.items.map((item: { itemId: string }) => item.itemId)).not.toContain('i3');
    expect(
      await ok('POST', '/catalog/items/bulk-update', { filter: 'true', set: { category: 'all' } }),
    ).toEqual({
      updated: ITEMS.length - 1,
    });
  });

  it('deletes the items a filter matches, for good across a restart', async () => {
    expect(await ok('POST', '/catalog/items/bulk-delete', { filter: "'sale' = true" })).toEqual({
      deleted: 3,
    });
    expect(await ok('POST', '/catalog/items/bulk-delete', { filter: "'sale' = true" })).toEqual({
      deleted: 0,
    });
    const listed = await ok('GET', '/catalog/items?limit=100');
    expect(listed.data.map((item: { externalId: string }) => item.externalId).sort()).toEqual([
      'i0',
      'i1',
      'i10',
      'i11',
      'i2',
      'i6',
      'i7',
      'i8',
      'i9',
    ]);
    expect(await daemon.stop()).toBe(0);
    daemon = await startDaemonProcess({ dataDir: daemon.dataDir });
    expect((await ok('GET', '/catalog/items?limit=100')).total).toBe(9);
    expectError(await call(daemon.url, 'GET', '/catalog/items/i3', { headers }), 404, 'NOT_FOUND');
    expect(filesNaming(GONE, filesUnder(daemon.dataDir))).toEqual([]);
  });
});
