import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenant,
  postAnnouncingLength,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { queryStore } from '../support/store-file.js';

let daemon: DaemonProcess;
let shop: TenantCredentials;
let headers: Record<string, string>;

const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
const getItem = (id: string) => call(daemon.url, 'GET', `/catalog/items/${id}`, { headers });

beforeAll(async () => {
  daemon = await startDaemonProcess();
  shop = await createTenant(daemon.url, 'shop');
  headers = tenantHeaders(shop);
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

describe('POST /ingestion/items', () => {
  it('upserts and merges partial deltas key by key; null removes a key', async () => {
    const created = await post('/ingestion/items', {
      items: [
        {
          externalId: 'p1',
          category: 'shoes',
          attributes: { price: 50, stock: 3, color: 'red', tags: ['a'] },
          expiresAt: '2030-01-01',
        },
      ],
    });
    expect(created).toMatchObject({ status: 200, body: { upserted: 1 } });
    const before = (await getItem('p1')).body;
    expect(before).toMatchObject({
      externalId: 'p1',
      category: 'shoes',
      attributes: { price: 50, stock: 3, color: 'red', tags: ['a'] },
      expiresAt: '2030-01-01T00:00:00.000Z',
      available: true,
      feedManaged: false,
    });

    await new Promise((resolve) => setTimeout(resolve, 5));
    const delta = await post('/ingestion/items', {
      items: [{ externalId: 'p1', attributes: { stock: 0, color: null, size: { eu: 42 } } }],
    });
    expect(delta.body).toEqual({ upserted: 1 });
    const after = (await getItem('p1')).body;
    expect(after.attributes).toEqual({ price: 50, stock: 0, tags: ['a'], size: { eu: 42 } });
    expect(after.category).toBe('shoes');
    expect(after.createdAt).toBe(before.createdAt);
    expect(Date.parse(after.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
  });

  it('applies concurrent deltas of one item without losing any', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        post('/ingestion/items', { items: [{ externalId: 'busy', attributes: { [`k${i}`]: i } }] }),
      ),
    );
    const item = (await getItem('busy')).body;
    expect(Object.keys(item.attributes)).toHaveLength(20);
  });

  it('rejects the whole batch when one record is invalid, naming each bad record', async () => {
    const response = await post('/ingestion/items', {
      items: [
        { externalId: 'good-1' },
        { externalId: '' },
        { externalId: 'good-2', attributes: 'not an object' },
        { externalId: 'good-3', expiresAt: 'tomorrow' },
      ],
    });
    expectError(response, 400, 'INVALID_BODY');
    const indexes = response.body.details.map((d: { index: number }) => d.index);
    expect(indexes).toEqual([1, 2, 3]);
    expect(response.body.details[0]).toMatchObject({
      index: 1,
      path: 'externalId',
      message: expect.any(String),
    });
    expectError(await getItem('good-1'), 404, 'NOT_FOUND');
  });

  it('rejects unknown fields rather than dropping them silently', async () => {
    const response = await post('/ingestion/items', { items: [{ externalId: 'x', price: 3 }] });
    expectError(response, 400, 'INVALID_BODY');
    expect(response.body.details[0]).toMatchObject({ index: 0 });
  });

  it('answers 413 BATCH_TOO_LARGE above 10,000 records and stores nothing', async () => {
    const items = Array.from({ length: 10_001 }, (_, i) => ({ externalId: `bulk-${i}` }));
    expectError(await post('/ingestion/items', { items }), 413, 'BATCH_TOO_LARGE');
    expectError(await getItem('bulk-0'), 404, 'NOT_FOUND');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 16 MiB', async () => {
    const response = await postAnnouncingLength(daemon.url, '/ingestion/items', headers, 17 * 1024 * 1024);
    expectError(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers 400 INVALID_BODY for malformed JSON, an empty body and a missing envelope', async () => {
    expectError(
      await call(daemon.url, 'POST', '/ingestion/items', { headers, raw: '{"items": [' }),
      400,
      'INVALID_BODY',
    );
    expectError(
      await call(daemon.url, 'POST', '/ingestion/items', { headers, raw: '' }),
      400,
      'INVALID_BODY',
    );
    expectError(await post('/ingestion/items', { rows: [] }), 400, 'INVALID_BODY');
    expectError(await post('/ingestion/items', [1, 2]), 400, 'INVALID_BODY');
  });
});

describe('POST /ingestion/users', () => {
  it('upserts users and merges attributes', async () => {
    expect(
      (
        await post('/ingestion/users', {
          users: [{ externalId: 'u1', attributes: { tier: 'gold', age: 30 } }],
        })
      ).body,
    ).toEqual({
      upserted: 1,
    });
    await post('/ingestion/users', {
      users: [{ externalId: 'u1', attributes: { age: null, country: 'DE' } }],
    });
    const users = await call(daemon.url, 'GET', '/catalog/users?page=1&limit=10', { headers });
    expect(users.body.data.find((u: { externalId: string }) => u.externalId === 'u1').attributes).toEqual({
      tier: 'gold',
      country: 'DE',
    });
  });
});

describe('POST /ingestion/interactions and /ingestion/impressions', () => {
  it('validates every record: identity, type, timestamp', async () => {
    const response = await post('/ingestion/interactions', {
      interactions: [
        { userId: 'u1', itemId: 'p1', type: 'view' },
        { itemId: 'p1', type: 'view' },
        { userId: 'u1', itemId: 'p1', type: 'like' },
        { userId: 'u1', itemId: 'p1', type: 'view', timestamp: 'yesterday' },
        { userId: 'u1', itemId: 'p1', type: 'view', weight: 'heavy' },
      ],
    });
    expectError(response, 400, 'INVALID_BODY');
    expect([...new Set(response.body.details.map((d: { index: number }) => d.index))]).toEqual([1, 2, 3, 4]);
    // An enum error lists the allowed values; the count of other problems says what it counts.
    const badType = await post('/ingestion/interactions', {
      interactions: [
        { userId: 'u1', itemId: 'p1', type: 'like' },
        { userId: 'u1', itemId: 'p1', type: 'view', weight: 'heavy' },
      ],
    });
    expect(badType.body.message).toBe(
      'invalid body at interactions.0.type: Invalid option: expected one of "view"|"cart"|"purchase"|"rating"|"bookmark" (1 more problem in details)',
    );
  });

  it('accepts events naming items the catalog does not hold yet, and says how many such items', async () => {
    const events = [
      { userId: 'u8', itemId: 'later-1', type: 'view' },
      { userId: 'u8', itemId: 'later-1', type: 'cart' },
      { userId: 'u8', itemId: 'later-2', type: 'view' },
    ];
    expect((await post('/ingestion/interactions', { interactions: events })).body).toEqual({
      accepted: 3,
      unknownItems: 2,
    });
    const impressions = [{ userId: 'u8', itemIds: ['later-2', 'later-3'] }];
    expect((await post('/ingestion/impressions', { impressions })).body).toEqual({
      accepted: 1,
      unknownItems: 2,
    });
    await post('/ingestion/items', {
      items: [{ externalId: 'later-1' }, { externalId: 'later-2' }, { externalId: 'later-3' }],
    });
    expect((await post('/ingestion/interactions', { interactions: events })).body).toEqual({ accepted: 3 });
    expect((await post('/ingestion/impressions', { impressions })).body).toEqual({ accepted: 1 });

    // Events older than every window, and events whose eventId was stored before, are counted alike.
    const old = '2001-01-01T00:00:00Z';
    const mixed = [
      { userId: 'u8', itemId: 'later-1', type: 'view', timestamp: old },
      { userId: 'u8', itemId: 'never-1', type: 'view', timestamp: old },
      { userId: 'u8', itemId: 'never-2', type: 'view', eventId: 'mixed-1' },
      { userId: 'u8', itemId: 'later-2', type: 'view', eventId: 'mixed-2' },
    ];
    expect((await post('/ingestion/interactions', { interactions: mixed })).body).toEqual({
      accepted: 4,
      unknownItems: 2,
    });
    const repeated = [
      { userId: 'u8', itemId: 'never-2', type: 'view', eventId: 'mixed-1' },
      { userId: 'u8', itemId: 'later-2', type: 'view', eventId: 'mixed-2' },
      { userId: 'u8', itemId: 'never-3', type: 'view', eventId: 'mixed-1' },
    ];
    expect((await post('/ingestion/interactions', { interactions: repeated })).body).toEqual({
      accepted: 3,
      unknownItems: 2,
    });
  });

  it('counts duplicates by eventId as accepted without storing them twice', async () => {
    const events = [
      { eventId: 'e-1', userId: 'u9', itemId: 'p1', type: 'view' },
      { eventId: 'e-2', userId: 'u9', itemId: 'p1', type: 'cart' },
    ];
    expect((await post('/ingestion/interactions', { interactions: events })).body).toMatchObject({
      accepted: 2,
    });
    expect((await post('/ingestion/interactions', { interactions: events })).body).toMatchObject({
      accepted: 2,
    });
    const inOne = await post('/ingestion/interactions', {
      interactions: [
        { eventId: 'e-3', userId: 'u9', itemId: 'p1', type: 'view' },
        { eventId: 'e-3', userId: 'u9', itemId: 'p1', type: 'view' },
      ],
    });
    expect(inOne.body).toMatchObject({ accepted: 2 });
    const impressions = [{ eventId: 'i-1', userId: 'u9', itemIds: ['p1', 'p2'], scenarioSlug: 'home' }];
    expect((await post('/ingestion/impressions', { impressions })).body).toMatchObject({ accepted: 1 });
    expect((await post('/ingestion/impressions', { impressions })).body).toMatchObject({ accepted: 1 });
  });

  it('stores default weights, normalised countries and receipt-time timestamps', async () => {
    const before = Date.now();
    await post('/ingestion/interactions', {
      interactions: [
        { sessionId: 'sess_w', itemId: 'w1', type: 'view', country: 'de' },
        { sessionId: 'sess_w', itemId: 'w1', type: 'cart', country: 'OTH' },
        { sessionId: 'sess_w', itemId: 'w1', type: 'purchase', country: 'Germany' },
        { sessionId: 'sess_w', itemId: 'w1', type: 'rating', country: 'XX' },
        {
          sessionId: 'sess_w',
          itemId: 'w1',
          type: 'view',
          weight: 7,
          timestamp: '2026-01-02T03:04:05+01:00',
        },
        { sessionId: 'sess_w', itemId: 'w1', type: 'view', timestamp: '2026-01-02T03:04:05' },
      ],
    });
    const after = Date.now();
    await post('/ingestion/impressions', {
      impressions: [{ sessionId: 'sess_w', itemIds: ['w1', 'w2'], country: 'fr', scenarioSlug: 'pdp' }],
    });
    const dataDir = daemon.dataDir;
    await daemon.stop();
    const rows = await queryStore(
      dataDir,
      `SELECT type, weight, country, ts FROM interactions WHERE tenant_id = 'shop' AND session_id = 'sess_w' ORDER BY seq`,
    );
    expect(rows.map((r) => [r.type, r.weight, r.country])).toEqual([
      ['view', 1, 'DE'],
      ['cart', 2, null],
      ['purchase', 4, null],
      ['rating', 3, null],
      ['view', 7, null],
      ['view', 1, null],
    ]);
    for (const row of rows.slice(0, 4)) {
      expect(Number(row.ts)).toBeGreaterThanOrEqual(before);
      expect(Number(row.ts)).toBeLessThanOrEqual(after);
    }
    expect(Number(rows[4].ts)).toBe(Date.parse('2026-01-02T02:04:05Z'));
    expect(Number(rows[5].ts)).toBe(Date.parse('2026-01-02T03:04:05Z'));
    const impressions = await queryStore(
      dataDir,
      `SELECT user_id, item_ids, country, scenario_slug FROM impressions WHERE tenant_id = 'shop' AND user_id = 'sess_w'`,
    );
    expect(impressions).toEqual([
      { user_id: 'sess_w', item_ids: ['w1', 'w2'], country: 'FR', scenario_slug: 'pdp' },
    ]);
    const stored = await queryStore(dataDir, `SELECT count(*) AS n FROM interactions WHERE event_id = 'e-3'`);
    expect(Number(stored[0].n)).toBe(1);
    daemon = await startDaemonProcess({ dataDir });
  });

  it('provisions a minimal user on the first known interaction when the tenant asks for it', async () => {
    const settings = await call(daemon.url, 'PUT', '/catalog/tenant-settings', {
      headers,
      body: { userProvisioningModes: ['on_first_known_interaction'] },
    });
    expect(settings.body.userProvisioningModes).toEqual(['on_first_known_interaction']);
    await post('/ingestion/interactions', {
      interactions: [
        { userId: 'fresh-user', itemId: 'p1', type: 'view' },
        { sessionId: 'sess_anon', itemId: 'p1', type: 'view' },
      ],
    });
    const users = await call(daemon.url, 'GET', '/catalog/users?limit=1000', { headers });
    const ids = users.body.data.map((u: { externalId: string }) => u.externalId);
    expect(ids).toContain('fresh-user');
    expect(ids).not.toContain('sess_anon');
  });
});
