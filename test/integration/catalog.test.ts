import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';

let daemon: DaemonProcess;
let headers: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemonProcess();
  headers = tenantHeaders(await createTenant(daemon.url, 'books'));
  const items = Array.from({ length: 25 }, (_, i) => ({
    externalId: `b-${String(i).padStart(2, '0')}`,
    category: i % 2 ? 'novel' : 'poetry',
    attributes: { price: i },
  }));
  await call(daemon.url, 'POST', '/ingestion/items', { headers, body: { items } });
  const users = Array.from({ length: 3 }, (_, i) => ({ externalId: `r-${i}` }));
  await call(daemon.url, 'POST', '/ingestion/users', { headers, body: { users } });
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

describe('GET /catalog/items', () => {
  it('pages raw documents in a stable order with data/page/limit/total', async () => {
    const first = await call(daemon.url, 'GET', '/catalog/items?page=1&limit=10', { headers });
    const third = await call(daemon.url, 'GET', '/catalog/items?page=3&limit=10', { headers });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 1, limit: 10, total: 25 });
    expect(first.body.data).toHaveLength(10);
    expect(first.body.data[0]).toEqual({
      externalId: 'b-00',
      category: 'poetry',
      attributes: { price: 0 },
      expiresAt: null,
      available: true,
      feedManaged: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(third.body.data.map((item: { externalId: string }) => item.externalId)).toEqual([
      'b-20',
      'b-21',
      'b-22',
      'b-23',
      'b-24',
    ]);
    const past = await call(daemon.url, 'GET', '/catalog/items?page=9&limit=10', { headers });
    expect(past.body).toEqual({ data: [], page: 9, limit: 10, total: 25 });
  });

  it('defaults to page 1 and limit 50', async () => {
    const response = await call(daemon.url, 'GET', '/catalog/items', { headers });
    expect(response.body).toMatchObject({ page: 1, limit: 50, total: 25 });
    expect(response.body.data).toHaveLength(25);
  });

  it('answers 400 INVALID_QUERY for out-of-range or malformed paging', async () => {
    for (const query of ['page=0', 'limit=0', 'limit=1001', 'page=abc', 'limit=2.5', 'page=-1']) {
      expectError(
        await call(daemon.url, 'GET', `/catalog/items?${query}`, { headers }),
        400,
        'INVALID_QUERY',
      );
    }
  });

  it('returns one raw item, or 404', async () => {
    const item = await call(daemon.url, 'GET', '/catalog/items/b-07', { headers });
    expect(item.body).toMatchObject({ externalId: 'b-07', category: 'novel', attributes: { price: 7 } });
    expectError(await call(daemon.url, 'GET', '/catalog/items/nope', { headers }), 404, 'NOT_FOUND');
  });
});

describe('GET /catalog/users', () => {
  it('pages users', async () => {
    const response = await call(daemon.url, 'GET', '/catalog/users?page=2&limit=2', { headers });
    expect(response.body).toMatchObject({ page: 2, limit: 2, total: 3 });
    expect(response.body.data).toEqual([
      { externalId: 'r-2', attributes: {}, createdAt: expect.any(String), updatedAt: expect.any(String) },
    ]);
    expectError(
      await call(daemon.url, 'GET', '/catalog/users?limit=5000', { headers }),
      400,
      'INVALID_QUERY',
    );
  });
});

describe('/catalog/tenant-settings', () => {
  it('returns every setting with defaults', async () => {
    const response = await call(daemon.url, 'GET', '/catalog/tenant-settings', { headers });
    expect(response.body).toEqual({
      fieldMapper: {},
      dimensions: [],
      freshness: { keyPath: null, type: 'date', fallbackToCreatedAt: true },
      userProvisioningModes: [],
      interactionWeights: { view: 1, cart: 2, purchase: 4, rating: 3, bookmark: 2 },
    });
  });

  it('updates only the fields sent, validates them, and keeps them across restarts', async () => {
    const put = await call(daemon.url, 'PUT', '/catalog/tenant-settings', {
      headers,
      body: {
        freshness: { keyPath: 'attributes.publishedAt', type: 'date', fallbackToCreatedAt: false },
        dimensions: [{ key: 'price', type: 'number', label: 'Price', facetable: true }],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.freshness).toEqual({
      keyPath: 'attributes.publishedAt',
      type: 'date',
      fallbackToCreatedAt: false,
    });
    expect(put.body.dimensions).toEqual([
      {
        key: 'price',
        type: 'number',
        label: 'Price',
        facetable: true,
        filterable: false,
        boostable: false,
        source: 'manual',
      },
    ]);
    const second = await call(daemon.url, 'PUT', '/catalog/tenant-settings', {
      headers,
      body: { fieldMapper: { namePath: 'attributes.title' }, interactionWeights: { bookmark: 5, view: 0.5 } },
    });
    expect(second.body.freshness.keyPath).toBe('attributes.publishedAt');
    expect(second.body.fieldMapper).toEqual({ namePath: 'attributes.title' });
    // The types left out take their default weights.
    expect(second.body.interactionWeights).toEqual({
      view: 0.5,
      cart: 2,
      purchase: 4,
      rating: 3,
      bookmark: 5,
    });

    for (const body of [
      { dimensions: [{ key: 'x', type: 'color' }] },
      { userProvisioningModes: ['always'] },
      { freshness: { keyPath: 5 } },
      { unknown: true },
      { interactionWeights: { bookmark: -1 } },
      { interactionWeights: { click: 1 } },
    ]) {
      expectError(
        await call(daemon.url, 'PUT', '/catalog/tenant-settings', { headers, body }),
        400,
        'INVALID_BODY',
      );
    }

    await daemon.stop();
    daemon = await startDaemonProcess({ dataDir: daemon.dataDir });
    const reloaded = await call(daemon.url, 'GET', '/catalog/tenant-settings', { headers });
    expect(reloaded.body).toEqual(second.body);
  });
});

describe('GET /health and the OpenAPI document', () => {
  it('needs no credentials', async () => {
    const health = await call(daemon.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({
      status: 'ok',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      uptimeS: expect.any(Number),
      embedder: { kind: 'hashing', model: 'hashing-v1' },
    });
    const openapi = await call(daemon.url, 'GET', '/openapi.json');
    expect(openapi.body.paths['/ingestion/items']).toBeDefined();
  });
});
