import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  signedCall,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type Response,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';
import { modelCaughtUp } from '../support/models.js';
import { signRequest } from '../../src/client/index.js';

/**
 * `POST /recommendations/next` and `POST /batch` (CONTRACT.md, "Integrator features"; docs/guide.md,
 * "The next page" and "Batches") against the real daemon. The shop's catalog comes from a feed served
 * here, so that a sync can make an item unavailable.
 */

interface Product {
  sku: string;
  title: string;
  dept: string;
}

const PRODUCTS: Product[] = Array.from({ length: 24 }, (_, i) => ({
  sku: `p-${String(i).padStart(2, '0')}`,
  title: `Product ${i}`,
  dept: i % 2 ? 'shoes' : 'bags',
}));
const ALL = PRODUCTS.map((p) => p.sku);
const SHOES = PRODUCTS.filter((p) => p.dept === 'shoes').map((p) => p.sku);
/** What the viewer looked at, oldest first. */
const VIEWED = ['p-03', 'p-07', 'p-11', 'p-02', 'p-05', 'p-13', 'p-17', 'p-20'];

let source: http.Server;
let catalog: Product[] = PRODUCTS;
let daemon: DaemonProcess;
let shop: TenantCredentials;
let other: TenantCredentials;
let headers: Record<string, string>;
let feedId: string;

type Answer = {
  items: { itemId: string; [key: string]: unknown }[];
  count: number;
  algorithm: string;
  scenario?: string;
  recommId: string;
};

const post = (route: string, body: unknown, as = headers) =>
  call(daemon.url, 'POST', route, { headers: as, body });
const get = (route: string) => call(daemon.url, 'GET', route, { headers });
const ids = (answer: Answer) => answer.items.map((item) => item.itemId);
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

async function sync(): Promise<{ upserted: number; markedUnavailable: number }> {
  const synced = await post(`/catalog/feeds/${feedId}/sync`, undefined);
  expect(synced.status).toBe(200);
  return synced.body;
}

beforeAll(async () => {
  source = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ items: catalog }));
  });
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  daemon = await startDaemonProcess({ env: { NEXTREC_FEED_PRIVATE_NETWORKS: 'true' } });
  shop = await createTenant(daemon.url, 'shop');
  other = await createTenant(daemon.url, 'other');
  headers = tenantHeaders(shop);
  const created = await post('/catalog/feeds', {
    sourceType: 'json_url',
    url: `http://127.0.0.1:${(source.address() as AddressInfo).port}/items`,
    itemsPath: '$.items',
    itemIdPath: 'sku',
    pagination: { mode: 'none' },
    mappingRules: [
      { property: 'title', path: 'title', dataType: 'string', target: 'name' },
      { property: 'dept', path: 'dept', dataType: 'enum', target: 'category' },
    ],
  });
  expect(created.status).toBe(201);
  feedId = created.body.id;
  expect((await post(`/catalog/feeds/${feedId}/preview`, undefined)).status).toBe(200);
  expect((await post(`/catalog/feeds/${feedId}/activate`, undefined)).status).toBe(200);
  expect(await sync()).toMatchObject({ upserted: 24, markedUnavailable: 0 });
  expect(
    (await post('/ingestion/items', { items: [{ externalId: 'o-1' }] }, tenantHeaders(other))).status,
  ).toBe(200);

  const interactions: Record<string, unknown>[] = [];
  // Pairs viewed together, and a popularity that falls with the number.
  for (let u = 0; u < 12; u++) {
    interactions.push({ userId: `u${u}`, itemId: ALL[u], type: 'view', timestamp: hoursAgo(20) });
    interactions.push({ userId: `u${u}`, itemId: ALL[u + 1], type: 'view', timestamp: hoursAgo(19) });
    interactions.push({ userId: `u${u}`, itemId: ALL[0], type: 'cart', timestamp: hoursAgo(18) });
  }
  VIEWED.forEach((itemId, i) =>
    interactions.push({ userId: 'viewer', itemId, type: 'view', timestamp: hoursAgo(10 - i) }),
  );
  expect((await post('/ingestion/interactions', { interactions })).status).toBe(200);
  await modelCaughtUp(daemon.url, 'shop', 'cooccurrence');
  expect(
    (
      await post('/scenarios', {
        slug: 'shoes-pdp',
        name: 'Shoes beside an item',
        logicType: 'item-to-item',
        filter: '\'category\' = "shoes"',
      })
    ).status,
  ).toBe(201);
});

afterAll(async () => {
  await daemon?.stop();
  if (daemon) removeDataDir(daemon.dataDir);
  source?.closeAllConnections();
  await new Promise<void>((resolve) => (source ? source.close(() => resolve()) : resolve()));
});

/**
 * Pages an answer until the ranking is exhausted: asks for `count` more after each page, until a page
 * is shorter than that; then once more, after that short page, for the empty one.
 */
async function pageThrough(first: Response<Answer>, count: number): Promise<Answer[]> {
  expect(first.status).toBe(200);
  const pages = [first.body];
  for (let i = 0; i < 40; i++) {
    const next = await post('/recommendations/next', { recommId: pages.at(-1)!.recommId, count });
    expect(next.status).toBe(200);
    pages.push(next.body);
    if (next.body.count < count) break;
  }
  const last = pages.at(-1)!;
  expect(last.count).toBeLessThan(count);
  if (last.count > 0) {
    const empty = await post('/recommendations/next', { recommId: last.recommId, count });
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ items: [], count: 0, recommId: expect.any(String) });
    pages.push(empty.body);
  }
  return pages;
}

/** The chain never repeats an item, every page is shaped as the first, and each has its own recommId. */
function expectChain(pages: Answer[], count: number): string[] {
  const shown = pages.flatMap(ids);
  expect(new Set(shown).size).toBe(shown.length);
  expect(new Set(pages.map((page) => page.recommId)).size).toBe(pages.length);
  for (const page of pages.slice(1)) {
    expect(page.algorithm).toBe(pages[0].algorithm);
    expect(page.scenario).toBe(pages[0].scenario);
    expect(page.count).toBe(page.items.length);
    expect(page.count).toBeLessThanOrEqual(count);
  }
  return shown;
}

describe('POST /recommendations/next', () => {
  const logicTypes: [string, Record<string, unknown>, string[]][] = [
    ['user-to-item', { logicType: 'user-to-item', userId: 'u3' }, []],
    ['user-to-item, a new user', { logicType: 'user-to-item', userId: 'newcomer' }, []],
    ['item-to-item', { logicType: 'item-to-item', itemId: 'p-00' }, ['p-00']],
    ['items-to-items', { logicType: 'items-to-items', itemIds: ['p-00', 'p-01'] }, ['p-00', 'p-01']],
    ['similar-products', { logicType: 'similar-products', itemId: 'p-05' }, ['p-05']],
    ['recently-viewed', { logicType: 'recently-viewed', userId: 'viewer' }, []],
  ];

  it.each(logicTypes)(
    'pages %s through its whole ranking, never repeating an item',
    async (_name, request, seeds) => {
      const whole = await post('/recommendations', {
        ...request,
        count: 100,
        returnProperties: false,
        noCache: true,
      });
      expect(whole.status).toBe(200);
      const ranking = ids(whole.body);
      for (const seed of seeds) expect(ranking).not.toContain(seed);
      const first = await post('/recommendations', { ...request, count: 5, returnProperties: false });
      const pages = await pageThrough(first, 5);
      const shown = expectChain(pages, 5);
      // Every item of the request's ranking, and nothing else.
      expect([...shown].sort()).toEqual([...ranking].sort());
      expect(pages.length).toBeGreaterThanOrEqual(2);
      if (request.logicType === 'recently-viewed') {
        expect([...shown].sort()).toEqual([...VIEWED].sort());
        // Newest first, across pages.
        expect(shown).toEqual([...VIEWED].reverse());
      } else {
        expect(shown.length).toBeGreaterThanOrEqual(ALL.length - 4);
        expect(pages[1].items.every((item) => typeof item.score === 'number')).toBe(true);
      }
    },
  );

  it('pages the answers of the legacy GET routes and of the items-to-items route', async () => {
    const routes: [Response<Answer>, Record<string, unknown>][] = [
      [
        await get('/recommendations/user-to-item/u5?count=7&returnProperties=false'),
        { logicType: 'user-to-item', userId: 'u5' },
      ],
      [
        await get('/recommendations/item-to-item/p-02?count=7&returnProperties=false'),
        { logicType: 'item-to-item', itemId: 'p-02' },
      ],
      [
        await get('/recommendations/recently-viewed/viewer?count=7&returnProperties=false'),
        { logicType: 'recently-viewed', userId: 'viewer' },
      ],
      [
        await get('/recommendations/similar-products/p-02?count=7&returnProperties=false'),
        { logicType: 'similar-products', itemId: 'p-02' },
      ],
      [
        await post('/recommendations/items-to-items', {
          itemIds: ['p-02'],
          count: 7,
          returnProperties: false,
        }),
        { logicType: 'items-to-items', itemIds: ['p-02'] },
      ],
    ];
    for (const [answer, request] of routes) {
      const shown = expectChain(await pageThrough(answer, 7), 7);
      const whole = await post('/recommendations', {
        ...request,
        count: 100,
        returnProperties: false,
        noCache: true,
      });
      expect([...shown].sort()).toEqual(ids(whole.body).sort());
    }
  });

  it("keeps the request's scenario, filter and projection on every page", async () => {
    const first = await post('/recommendations', {
      scenario: 'shoes-pdp',
      itemId: 'p-01',
      count: 4,
      includedProperties: ['category'],
    });
    expect(first.body.scenario).toBe('shoes-pdp');
    const pages = await pageThrough(first, 4);
    const shown = expectChain(pages, 4);
    expect([...shown].sort()).toEqual(SHOES.filter((sku) => sku !== 'p-01').sort());
    for (const item of pages.flatMap((page) => page.items)) {
      expect(Object.keys(item).sort()).toEqual(['category', 'itemId', 'score']);
      expect(item.category).toBe('shoes');
    }
  });

  it('pages with the public token, as the recommendation routes take it', async () => {
    const first = await signedCall(daemon.url, 'POST', '/recommendations', shop, {
      token: 'public',
      body: { logicType: 'item-to-item', itemId: 'p-04', count: 3 },
    });
    expect(first.status).toBe(200);
    const next = await signedCall(daemon.url, 'POST', '/recommendations/next', shop, {
      token: 'public',
      body: { recommId: first.body.recommId, count: 3 },
    });
    expect(next.status).toBe(200);
    expect(next.body.count).toBe(3);
    expect(ids(next.body).some((id) => ids(first.body).includes(id))).toBe(false);
  });

  it('answers 404 RECOMM_NOT_FOUND for an unknown recommId and for one of another tenant', async () => {
    expectError(
      await post('/recommendations/next', { recommId: 'b4331598-921b-4a51-b6da-82713084a13d', count: 3 }),
      404,
      'RECOMM_NOT_FOUND',
    );
    const mine = await post('/recommendations', { logicType: 'item-to-item', itemId: 'p-06', count: 3 });
    expect(mine.status).toBe(200);
    expectError(
      await post('/recommendations/next', { recommId: mine.body.recommId, count: 3 }, tenantHeaders(other)),
      404,
      'RECOMM_NOT_FOUND',
    );
    // The other tenant's own answers page.
    const theirs = await post(
      '/recommendations',
      { logicType: 'user-to-item', userId: 'x', count: 1 },
      tenantHeaders(other),
    );
    expect(theirs.body.items.map((item: { itemId: string }) => item.itemId)).toEqual(['o-1']);
    const theirNext = await post(
      '/recommendations/next',
      { recommId: theirs.body.recommId, count: 3 },
      tenantHeaders(other),
    );
    expect(theirNext.body).toMatchObject({ items: [], count: 0 });
    // A credential of one tenant for the other: 403 before anything else.
    expectError(
      await post(
        '/recommendations/next',
        { recommId: mine.body.recommId, count: 3 },
        {
          'x-tenant-id': 'other',
          'x-api-key': shop.apiKey,
        },
      ),
      403,
      'FORBIDDEN_TENANT',
    );
  });

  it('validates the body: count 1..100 and a recommId', async () => {
    const mine = await post('/recommendations', { logicType: 'item-to-item', itemId: 'p-06', count: 3 });
    for (const body of [
      { recommId: mine.body.recommId, count: 0 },
      { recommId: mine.body.recommId, count: 101 },
      { recommId: mine.body.recommId },
      { count: 3 },
      { recommId: mine.body.recommId, count: 3, extra: true },
    ]) {
      expectError(await post('/recommendations/next', body), 400, 'INVALID_BODY');
    }
    expect((await post('/recommendations/next', { recommId: mine.body.recommId, count: 100 })).status).toBe(
      200,
    );
  });

  it('records each page as an answer of its algorithm, and credits a click to its recommId', async () => {
    // A tenant of its own, so that no other answer is recorded beside these.
    const recorded = tenantHeaders(await createTenant(daemon.url, 'recorded'));
    const items = ['r-1', 'r-2', 'r-3', 'r-4'].map((externalId) => ({ externalId }));
    expect((await post('/ingestion/items', { items }, recorded)).status).toBe(200);
    const views = items.map(({ externalId }, i) => ({
      userId: 'reader',
      itemId: externalId,
      type: 'view',
      timestamp: hoursAgo(5 - i),
    }));
    expect((await post('/ingestion/interactions', { interactions: views }, recorded)).status).toBe(200);
    const first = await post(
      '/recommendations',
      { logicType: 'recently-viewed', userId: 'reader', count: 2 },
      recorded,
    );
    expect(ids(first.body)).toEqual(['r-4', 'r-3']);
    const second = await post('/recommendations/next', { recommId: first.body.recommId, count: 2 }, recorded);
    expect(ids(second.body)).toEqual(['r-2', 'r-1']);
    const click = await post(
      '/ingestion/interactions',
      { interactions: [{ userId: 'reader', itemId: 'r-2', type: 'view', recommId: second.body.recommId }] },
      recorded,
    );
    expect(click.status).toBe(200);
    await eventually(async () => {
      const response = await call(daemon.url, 'GET', '/analytics/algorithms', { headers: recorded });
      expect(response.status).toBe(200);
      const row = response.body.data.find((r: { algorithm: string }) => r.algorithm === 'recently-viewed');
      expect(row).toMatchObject({ answers: 2, clicks: 1 });
    });
  });

  it('skips items that became unavailable since the answer', async () => {
    const first = await post('/recommendations', {
      logicType: 'user-to-item',
      userId: 'u7',
      count: 3,
      returnProperties: false,
    });
    expect(first.status).toBe(200);
    const whole = await post('/recommendations', {
      logicType: 'user-to-item',
      userId: 'u7',
      count: 100,
      returnProperties: false,
      noCache: true,
    });
    // An item the first page did not show leaves the feed, and so the catalog's available items.
    const gone = ids(whole.body).find((id) => !ids(first.body).includes(id))!;
    catalog = PRODUCTS.filter((p) => p.sku !== gone);
    try {
      expect(await sync()).toMatchObject({ markedUnavailable: 1 });
      const pages = await pageThrough(first, 5);
      const shown = expectChain(pages, 5);
      expect(shown).not.toContain(gone);
      expect([...shown].sort()).toEqual(
        ids(whole.body)
          .filter((id) => id !== gone)
          .sort(),
      );
    } finally {
      catalog = PRODUCTS;
      expect(await sync()).toMatchObject({ markedUnavailable: 0 });
    }
  });
});

describe('POST /batch', () => {
  const batch = (body: unknown, as = headers) => post('/batch', body, as);

  it('runs its requests in order, each answered as if sent alone', async () => {
    const requests = [
      { method: 'GET', path: '/catalog/items/p-03' },
      {
        method: 'POST',
        path: '/ingestion/users',
        body: { users: [{ externalId: 'batch-user', attributes: { a: 1 } }] },
      },
      { method: 'GET', path: '/catalog/users', query: { page: 1, limit: 1000 } },
      { method: 'GET', path: '/catalog/items/nothing' },
      { method: 'POST', path: '/recommendations', body: { logicType: 'item-to-item' } },
      {
        method: 'GET',
        path: '/recommendations/item-to-item/p-03',
        query: { count: 2, includedProperties: ['category', 'attributes.name'] },
      },
      { method: 'DELETE', path: '/no/such/route' },
      { method: 'GET', path: '/health' },
    ];
    const response = await batch({ requests });
    expect(response.status).toBe(200);
    const { results } = response.body as { results: { status: number; body: any }[] }; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 404, 400, 200, 404, 200]);
    expect(results[0].body).toEqual((await get('/catalog/items/p-03')).body);
    expect(results[1].body).toEqual({ upserted: 1 });
    // The write before it is seen by the read after it.
    expect(results[2].body.data.map((user: { externalId: string }) => user.externalId)).toContain(
      'batch-user',
    );
    expect(results[3].body).toEqual((await get('/catalog/items/nothing')).body);
    expect(results[3].body.code).toBe('NOT_FOUND');
    expect(results[4].body).toMatchObject({ statusCode: 400, code: 'MISSING_SEED' });
    expect(results[5].body).toMatchObject({
      count: 2,
      algorithm: 'co-occurrence',
      recommId: expect.any(String),
    });
    expect(Object.keys(results[5].body.items[0]).sort()).toEqual([
      'attributes',
      'category',
      'itemId',
      'score',
    ]);
    expect(results[6].body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
    expect(results[7].body).toMatchObject({ status: 'ok' });
    // A recommId answered inside a batch pages like any other.
    const next = await post('/recommendations/next', { recommId: results[5].body.recommId, count: 2 });
    expect(next.status).toBe(200);
    expect(ids(next.body).some((id) => ids(results[5].body).includes(id))).toBe(false);
  });

  it('takes 1 to 1,000 requests: 0 or 1,001 is 400 INVALID_BODY', async () => {
    const one = { method: 'GET', path: '/catalog/items/p-01' };
    expectError(await batch({ requests: [] }), 400, 'INVALID_BODY');
    expectError(await batch({ requests: Array(1001).fill(one) }), 400, 'INVALID_BODY');
    expectError(
      await batch({ requests: [{ method: 'PATCH', path: '/catalog/items/p-01' }] }),
      400,
      'INVALID_BODY',
    );
    expectError(await batch({}), 400, 'INVALID_BODY');
    const full = await batch({ requests: Array(1000).fill(one) });
    expect(full.status).toBe(200);
    expect(full.body.results).toHaveLength(1000);
    expect(full.body.results.every((result: { status: number }) => result.status === 200)).toBe(true);
  });

  it('answers a batch inside a batch with its own 400 INVALID_BODY, and runs the others', async () => {
    const inner = { requests: [{ method: 'GET', path: '/catalog/items/p-01' }] };
    const response = await batch({
      requests: [
        { method: 'POST', path: '/batch', body: inner },
        { method: 'POST', path: '/batch/', body: inner },
        { method: 'GET', path: '/catalog/items/p-01' },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body.results.map((result: { status: number }) => result.status)).toEqual([400, 400, 200]);
    expect(response.body.results[0].body).toMatchObject({ statusCode: 400, code: 'INVALID_BODY' });
  });

  it("checks each request against the credential's scope: its own 403, the others still run", async () => {
    const requests = [
      {
        method: 'POST',
        path: '/recommendations',
        body: { logicType: 'item-to-item', itemId: 'p-01', count: 2 },
      },
      {
        method: 'POST',
        path: '/ingestion/interactions',
        body: { interactions: [{ userId: 'x', itemId: 'p-01', type: 'view' }] },
      },
      { method: 'GET', path: '/recommendations/user-to-item/u1', query: { count: 2 } },
      { method: 'GET', path: '/tenants' },
    ];
    const signed = await signedCall(daemon.url, 'POST', '/batch', shop, {
      token: 'public',
      body: { requests },
    });
    expect(signed.status).toBe(200);
    const { results } = signed.body;
    expect(results.map((result: { status: number }) => result.status)).toEqual([200, 403, 200, 403]);
    expect(results[1].body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN_SCOPE' });
    expect(results[3].body).toMatchObject({ statusCode: 403, code: 'FORBIDDEN_SCOPE' });
    // The API key may do both; a user delete stays the API key's alone, so a JWT gets a 403 for it.
    const withKey = await batch({ requests });
    expect(withKey.body.results.map((result: { status: number }) => result.status)).toEqual([
      200, 200, 200, 403,
    ]);
    const token = await post('/auth/token', { ttlSeconds: 600 });
    const bearer = { 'x-tenant-id': 'shop', authorization: `Bearer ${token.body.token}` };
    const jwt = await batch(
      {
        requests: [
          { method: 'DELETE', path: '/users/nobody' },
          { method: 'GET', path: '/catalog/items/p-01' },
        ],
      },
      bearer,
    );
    expect(jwt.body.results.map((result: { status: number }) => result.status)).toEqual([403, 200]);
  });

  it('is refused whole for a credential of another tenant, or without X-Tenant-Id', async () => {
    const requests = [{ method: 'GET', path: '/catalog/items/p-01' }];
    expectError(
      await batch({ requests }, { 'x-tenant-id': 'shop', 'x-api-key': other.apiKey }),
      403,
      'FORBIDDEN_TENANT',
    );
    expectError(await batch({ requests }, { 'x-api-key': shop.apiKey }), 400, 'TENANT_REQUIRED');
    expectError(await batch({ requests }, { 'x-tenant-id': 'shop' }), 401, 'UNAUTHORIZED');
    // A client's own batch header names no batch.
    expectError(
      await call(daemon.url, 'POST', '/ingestion/users', {
        headers: { 'x-tenant-id': 'shop', 'x-nextrec-batch': 'b4331598-921b-4a51-b6da-82713084a13d' },
        body: { users: [{ externalId: 'intruder' }] },
      }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('is signed as one POST: its signature covers every request, once', async () => {
    const body = {
      requests: [
        { method: 'POST', path: '/ingestion/users', body: { users: [{ externalId: 'signed-user' }] } },
        { method: 'GET', path: '/users/signed-user/export' },
      ],
    };
    const signed = await signedCall(daemon.url, 'POST', '/batch', shop, {
      body,
      timestamp: Math.floor(Date.now() / 1000),
    });
    expect(signed.status).toBe(200);
    // A private token may write, not export a user.
    expect(signed.body.results.map((result: { status: number }) => result.status)).toEqual([200, 403]);
    const text = JSON.stringify(body);
    const expired = await signedCall(daemon.url, 'POST', '/batch', shop, { raw: text, timestamp: 1 });
    expectError(expired, 401, 'SIGNATURE_EXPIRED');
    // The same signature with another body does not verify.
    // (Another body than the first's, whose signature, made in the same second, was used already.)
    const text2 = text.replace('signed-user', 'signed-user-2');
    const good = await signRequest({ method: 'POST', url: '/batch', token: shop.privateToken, body: text2 });
    const tampered = text2.replace('signed-user-2', 'other-user');
    expectError(
      await call(daemon.url, 'POST', good.url, {
        headers: { 'x-tenant-id': 'shop', ...good.headers },
        raw: tampered,
      }),
      401,
      'SIGNATURE_INVALID',
    );
    const once = await call(daemon.url, 'POST', good.url, {
      headers: { 'x-tenant-id': 'shop', ...good.headers },
      raw: text2,
    });
    expect(once.status).toBe(200);
    expectError(
      await call(daemon.url, 'POST', good.url, {
        headers: { 'x-tenant-id': 'shop', ...good.headers },
        raw: text2,
      }),
      401,
      'SIGNATURE_REPLAYED',
    );
  });

  it('with distinctRecomms, lists no item in two recommendation results', async () => {
    const requests = [
      {
        method: 'POST',
        path: '/recommendations',
        body: { logicType: 'user-to-item', userId: 'u2', count: 6, returnProperties: false },
      },
      {
        method: 'GET',
        path: '/recommendations/user-to-item/u2',
        query: { count: 6, returnProperties: false },
      },
      { method: 'GET', path: '/catalog/items/p-01' },
      {
        method: 'POST',
        path: '/recommendations/items-to-items',
        body: { itemIds: ['p-01'], count: 6, returnProperties: false },
      },
      { method: 'GET', path: '/recommendations/recently-viewed/viewer', query: { count: 6 } },
    ];
    const plain = await batch({ requests });
    type Results = { results: { status: number; body: Answer }[] };
    const lists = (response: Response<Results>) =>
      response.body.results
        .filter((_, i) => i !== 2)
        .map((result) => {
          expect(result.status).toBe(200);
          return ids(result.body);
        }) as string[][];
    // Without it, the same request twice lists the same items.
    expect(lists(plain)[1]).toEqual(lists(plain)[0]);
    const distinct = await batch({ requests, distinctRecomms: true });
    expect(distinct.status).toBe(200);
    const distinctLists = lists(distinct);
    const all = distinctLists.flat();
    expect(new Set(all).size).toBe(all.length);
    expect(distinctLists[0]).toEqual(lists(plain)[0]);
    expect(distinctLists.slice(0, 3).map((list) => list.length)).toEqual([6, 6, 6]);
    // recently-viewed lists only what the viewer saw and the lists before did not.
    expect(distinctLists[3].every((id) => VIEWED.includes(id) && !all.slice(0, 18).includes(id))).toBe(true);
    // A next page inside the batch skips the earlier lists too.
    const paged = await batch({
      requests: [
        {
          method: 'POST',
          path: '/recommendations',
          body: { logicType: 'item-to-item', itemId: 'p-09', count: 4 },
        },
        {
          method: 'POST',
          path: '/recommendations/next',
          body: { recommId: distinct.body.results[0].body.recommId, count: 4 },
        },
      ],
      distinctRecomms: true,
    });
    const [first, second] = paged.body.results.map((result: { body: Answer }) => ids(result.body));
    expect(second).toHaveLength(4);
    expect(second.some((id: string) => first.includes(id) || distinctLists[0].includes(id))).toBe(false);
  });

  it('runs no more requests once its results pass 64 Mi characters: each left gets a 413', async () => {
    const bulky = tenantHeaders(await createTenant(daemon.url, 'bulky'));
    const blob = 'x'.repeat(110_000);
    const items = Array.from({ length: 10 }, (_, i) => ({ externalId: `big-${i}`, attributes: { blob } }));
    expect((await post('/ingestion/items', { items }, bulky)).status).toBe(200);
    // About 1.1 million characters a result: the 62nd passes 64 Mi.
    const listing = { method: 'GET', path: '/catalog/items', query: { limit: 1000 } };
    const response = await batch({ requests: Array(70).fill(listing) }, bulky);
    expect(response.status).toBe(200);
    const statuses = response.body.results.map((result: { status: number }) => result.status);
    const firstRefused = statuses.indexOf(413);
    expect(firstRefused).toBeGreaterThan(55);
    expect(firstRefused).toBeLessThan(66);
    expect(statuses.slice(0, firstRefused).every((status: number) => status === 200)).toBe(true);
    expect(statuses.slice(firstRefused).every((status: number) => status === 413)).toBe(true);
    expect(response.body.results[firstRefused].body).toMatchObject({
      statusCode: 413,
      code: 'PAYLOAD_TOO_LARGE',
    });
  });

  it('counts once against the rate limit, and each of its requests once more', async () => {
    const limited = await createTenant(daemon.url, 'limited');
    const set = await call(daemon.url, 'PUT', '/tenants/limited/rate-limits', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { api: 4 },
    });
    expect(set.status).toBe(200);
    const response = await batch(
      { requests: Array(5).fill({ method: 'GET', path: '/catalog/items?page=1&limit=1' }) },
      tenantHeaders(limited),
    );
    expect(response.status).toBe(200);
    // The batch took one of the four; its first three requests the rest.
    expect(response.body.results.map((result: { status: number }) => result.status)).toEqual([
      200, 200, 200, 429, 429,
    ]);
    expect(response.body.results[3].body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(limited) }),
      429,
      'RATE_LIMITED',
    );
  });
});
