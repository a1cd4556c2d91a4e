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
import { eventually } from '../support/eventually.js';
import { everyModelCaughtUp, modelCaughtUp } from '../support/models.js';

let daemon: DaemonProcess;
let headers: Record<string, string>;

const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
const get = (route: string) => call(daemon.url, 'GET', route, { headers });
const ids = (response: { body: { items: { itemId: string }[] } }) =>
  response.body.items.map((item) => item.itemId);

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

beforeAll(async () => {
  daemon = await startDaemonProcess();
  headers = tenantHeaders(await createTenant(daemon.url, 'store'));
  // Shoes s1..s6, bags b1..b4; s6 is unavailable later; popularity decreases with the number.
  const items = [
    ...[1, 2, 3, 4, 5, 6].map((n) => ({
      externalId: `s${n}`,
      category: 'shoes',
      attributes: {
        price: n * 10,
        brand: n % 2 ? 'acme' : 'zenith',
        name: `Shoe ${n}`,
        stock: n === 3 ? 0 : 5,
      },
    })),
    ...[1, 2, 3, 4].map((n) => ({
      externalId: `b${n}`,
      category: 'bags',
      attributes: { price: n * 25, brand: 'acme', name: `Bag ${n}`, stock: 2 },
    })),
  ];
  expect((await post('/ingestion/items', { items })).status).toBe(200);
  const interactions: Record<string, unknown>[] = [];
  // u1..u5 view s1 and s2 together; u6..u8 view s1 and b1 together.
  for (let u = 1; u <= 5; u++) {
    interactions.push({
      userId: `u${u}`,
      itemId: 's1',
      type: 'view',
      timestamp: hoursAgo(10),
      country: 'DE',
    });
    interactions.push({ userId: `u${u}`, itemId: 's2', type: 'view', timestamp: hoursAgo(9), country: 'DE' });
  }
  for (let u = 6; u <= 8; u++) {
    interactions.push({ userId: `u${u}`, itemId: 's1', type: 'view', timestamp: hoursAgo(8) });
    interactions.push({ userId: `u${u}`, itemId: 'b1', type: 'view', timestamp: hoursAgo(7) });
  }
  interactions.push({ userId: 'buyer', itemId: 's4', type: 'view', timestamp: hoursAgo(3) });
  interactions.push({ userId: 'buyer', itemId: 's5', type: 'view', timestamp: hoursAgo(2) });
  interactions.push({ userId: 'buyer', itemId: 's4', type: 'purchase', timestamp: hoursAgo(1) });
  expect((await post('/ingestion/interactions', { interactions })).status).toBe(200);
  // The first models, built from all of them, however long their builds take (user-to-item ranks from
  // EASE and co-occurrence).
  await modelCaughtUp(daemon.url, 'store', 'cooccurrence');
  await modelCaughtUp(daemon.url, 'store', 'ease');
  // A bag can only rank second for s1 through co-occurrence (the category fallback gives shoes).
  const response = await post('/recommendations', {
    logicType: 'item-to-item',
    itemId: 's1',
    count: 2,
    noCache: true,
  });
  expect(ids(response)).toEqual(['s2', 'b1']);
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

describe('POST /recommendations', () => {
  it('answers item-to-item from co-occurrence, best neighbour first, padded by popularity', async () => {
    const response = await post('/recommendations', { logicType: 'item-to-item', itemId: 's1', count: 4 });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.body).toMatchObject({
      count: 4,
      algorithm: 'co-occurrence',
      recommId: expect.any(String),
    });
    expect(ids(response).slice(0, 2)).toEqual(['s2', 'b1']);
    expect(ids(response)).not.toContain('s1');
    expect(response.body.items[0]).toMatchObject({
      itemId: 's2',
      score: expect.any(Number),
      externalId: 's2',
      category: 'shoes',
      attributes: { name: 'Shoe 2' },
    });
    expect(response.body.scenario).toBeUndefined();
  });

  it('gives every answer, cached or not, a recommId of its own', async () => {
    const body = { logicType: 'item-to-item', itemId: 's1', count: 3, returnProperties: false };
    const answers = [await post('/recommendations', body), await post('/recommendations', body)];
    answers.push(await post('/recommendations', { ...body, noCache: true }));
    expect(answers.map((answer) => answer.body.items)).toEqual(Array(3).fill(answers[0].body.items));
    expect(new Set(answers.map((answer) => answer.body.recommId)).size).toBe(3);
  });

  it('answers a body sent again, on either POST route, as it answered it the first time', async () => {
    const body = {
      logicType: 'items-to-items',
      itemIds: ['s2', 'b1'],
      count: 3,
      country: 'DE',
      includedProperties: ['attributes.name'],
      filter: `'price' > 0`,
      boosters: [`boost by 2 where 'brand' = "acme"`],
      rulesSlugs: [],
    };
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post('/recommendations', body));
    answers.push(await post('/recommendations', { ...body, noCache: true }));
    const legacyBody: Partial<typeof body> = { ...body };
    delete legacyBody.logicType;
    for (let i = 0; i < 2; i++) answers.push(await post('/recommendations/items-to-items', legacyBody));
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(answers.map((answer) => answer.body.items)).toEqual(Array(6).fill(answers[0].body.items));

    for (let i = 0; i < 2; i++) {
      expectError(
        await post('/recommendations', { logicType: 'sideways', userId: 'u1' }),
        400,
        'INVALID_BODY',
      );
      expectError(await post('/recommendations', { logicType: 'user-to-item' }), 400, 'MISSING_SEED');
    }
  });

  it('sends names beyond ASCII as UTF-8, with their length in bytes', async () => {
    const shop = tenantHeaders(await createTenant(daemon.url, 'unicode'));
    const name = 'Café Ünïcödé 東京 👟';
    const items = [{ externalId: 'x1', attributes: { name } }];
    const interactions = [{ userId: 'v', itemId: 'x1', type: 'view', timestamp: hoursAgo(1) }];
    const write = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers: shop, body });
    expect((await write('/ingestion/items', { items })).status).toBe(200);
    expect((await write('/ingestion/interactions', { interactions })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${daemon.url}/recommendations`, {
        method: 'POST',
        headers: { ...shop, 'content-type': 'application/json' },
        body: JSON.stringify({ logicType: 'recently-viewed', userId: 'v' }),
      });
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      const answer = JSON.parse(bytes.toString('utf8')) as { items: { attributes: { name: string } }[] };
      expect(answer.items[0].attributes.name).toBe(name);
    }
  });

  it('defaults count to 10 and never returns more items than the catalog has', async () => {
    const response = await post('/recommendations', { logicType: 'item-to-item', itemId: 's1' });
    expect(response.body.count).toBe(9);
    expect(response.body.items).toHaveLength(9);
  });

  it('answers user-to-item with weighted-history, items-to-items without the seeds, recently-viewed newest first', async () => {
    const forUser = await post('/recommendations', { logicType: 'user-to-item', userId: 'u1', count: 3 });
    expect(forUser.body.algorithm).toBe('weighted-history');
    expect(forUser.body.count).toBe(3);

    const multi = await post('/recommendations', {
      logicType: 'items-to-items',
      itemIds: ['s2', 'b1', 'nope'],
      count: 3,
    });
    expect(multi.body.algorithm).toBe('multi-seed-co-occurrence');
    expect(ids(multi)[0]).toBe('s1');
    expect(ids(multi)).not.toContain('s2');
    expect(ids(multi)).not.toContain('b1');

    const recent = await post('/recommendations', { logicType: 'recently-viewed', userId: 'buyer' });
    expect(recent.body.algorithm).toBe('recently-viewed');
    expect(recent.body.items).toEqual([
      expect.objectContaining({ itemId: 's5' }),
      expect.objectContaining({ itemId: 's4' }),
    ]);
    expect(recent.body.items[0].score).toBeUndefined();
  });

  it('answers cold users with popularity, not an error', async () => {
    const response = await post('/recommendations', {
      logicType: 'user-to-item',
      userId: 'never-seen',
      count: 2,
    });
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(['s1', 's2']);
    const recent = await post('/recommendations', { logicType: 'recently-viewed', userId: 'never-seen' });
    expect(recent.body).toMatchObject({ items: [], count: 0 });
  });

  it('answers the contract codes for missing seeds, unknown scenarios and items, bad bodies', async () => {
    expectError(await post('/recommendations', {}), 400, 'MISSING_SEED');
    expectError(await post('/recommendations', { logicType: 'user-to-item' }), 400, 'MISSING_SEED');
    expectError(await post('/recommendations', { logicType: 'item-to-item' }), 400, 'MISSING_SEED');
    expectError(
      await post('/recommendations', { logicType: 'items-to-items', itemIds: [] }),
      400,
      'MISSING_SEED',
    );
    expectError(await post('/recommendations', { scenario: 'nope' }), 404, 'SCENARIO_NOT_FOUND');
    expectError(
      await post('/recommendations', { logicType: 'item-to-item', itemId: 'nope' }),
      404,
      'ITEM_NOT_FOUND',
    );
    expectError(
      await post('/recommendations', { logicType: 'items-to-items', itemIds: ['x', 'y'] }),
      404,
      'ITEM_NOT_FOUND',
    );
    expectError(await post('/recommendations', { logicType: 'sideways', userId: 'u1' }), 400, 'INVALID_BODY');
    expectError(
      await post('/recommendations', { logicType: 'user-to-item', userId: 'u1', count: 0 }),
      400,
      'INVALID_BODY',
    );
    const badFilter = await post('/recommendations', {
      logicType: 'user-to-item',
      userId: 'u1',
      filter: "'price' <",
    });
    expectError(badFilter, 400, 'INVALID_EXPRESSION');
    expect(badFilter.body.details[0]).toMatchObject({
      position: expect.any(Number),
      line: 1,
      column: expect.any(Number),
    });
  });
});

describe('projection', () => {
  it('answers lean, selective and full payloads', async () => {
    const lean = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's1',
      count: 1,
      returnProperties: false,
    });
    expect(lean.body.items).toEqual([{ itemId: 's2', score: expect.any(Number) }]);
    const selective = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's1',
      count: 1,
      includedProperties: ['attributes.name', 'category', 'attributes.missing', 'name'],
    });
    expect(selective.body.items).toEqual([
      { itemId: 's2', score: expect.any(Number), attributes: { name: 'Shoe 2' }, category: 'shoes' },
    ]);
    const ignored = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's1',
      count: 1,
      returnProperties: false,
      includedProperties: ['category'],
    });
    expect(ignored.body.items).toEqual([{ itemId: 's2', score: expect.any(Number) }]);
  });

  it('rejects unsafe paths, too many paths and over-long URLs on GET', async () => {
    expectError(
      await post('/recommendations', {
        logicType: 'item-to-item',
        itemId: 's1',
        includedProperties: ['attributes.__proto__.x'],
      }),
      400,
      'UNSAFE_PATH',
    );
    expectError(
      await get('/recommendations/item-to-item/s1?includedProperties=attributes.constructor'),
      400,
      'UNSAFE_PATH',
    );
    const many = Array.from({ length: 21 }, (_, i) => `attributes.k${i}`).join(',');
    expectError(
      await get(`/recommendations/item-to-item/s1?includedProperties=${many}`),
      400,
      'TOO_MANY_PATHS',
    );
    const twenty = Array.from({ length: 20 }, (_, i) => `attributes.k${i}`).join(',');
    expect((await get(`/recommendations/item-to-item/s1?includedProperties=${twenty}`)).status).toBe(200);
    expectError(
      await get(
        `/recommendations/item-to-item/s1?returnProperties=true&includedProperties=attributes.${'x'.repeat(2100)}`,
      ),
      400,
      'URL_TOO_LONG',
    );
    // The length is checked before the query: limits of single parameters don't answer first.
    for (const query of [`includedProperties=${'a'.repeat(4200)}`, `padding=${'x'.repeat(2100)}`]) {
      expectError(await get(`/recommendations/item-to-item/s1?${query}`), 400, 'URL_TOO_LONG');
    }
  });

  it('ranks a country that is not an ISO code globally, however long', async () => {
    const request = { logicType: 'item-to-item', itemId: 's1', count: 5, noCache: true };
    const global = ids(await post('/recommendations', request));
    for (const country of ['OTH', 'XX', 'not-a-country-code-at-all']) {
      const response = await post('/recommendations', { ...request, country });
      expect(response.status).toBe(200);
      expect(ids(response)).toEqual(global);
      const legacy = await get(`/recommendations/item-to-item/s1?count=5&noCache=true&country=${country}`);
      expect(ids(legacy)).toEqual(global);
    }
  });

  it('rejects an empty path segment in a POST body as a body error', async () => {
    const response = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's1',
      includedProperties: ['attributes..name'],
    });
    expectError(response, 400, 'INVALID_BODY');
    expect(response.body.details[0].path).toBe('includedProperties.0');
  });
});

describe('legacy routes', () => {
  it('answer exactly like the unified endpoint', async () => {
    const pairs: [string, Record<string, unknown>][] = [
      [
        '/recommendations/user-to-item/u1?count=3&returnProperties=false',
        { logicType: 'user-to-item', userId: 'u1', count: 3 },
      ],
      [
        '/recommendations/item-to-item/s1?count=3&userId=buyer&country=de',
        { logicType: 'item-to-item', itemId: 's1', count: 3, userId: 'buyer', country: 'DE' },
      ],
      [
        '/recommendations/recently-viewed/buyer?country=FR',
        { logicType: 'recently-viewed', userId: 'buyer' },
      ],
      [
        '/recommendations/similar-products/s1?count=4',
        { logicType: 'similar-products', itemId: 's1', count: 4 },
      ],
    ];
    for (const [route, body] of pairs) {
      const legacy = await get(route);
      const unified = await post('/recommendations', body);
      expect(legacy.status).toBe(200);
      expect({ route, items: ids(legacy), algorithm: legacy.body.algorithm }).toEqual({
        route,
        items: ids(unified),
        algorithm: unified.body.algorithm,
      });
    }
    const legacyMulti = await call(daemon.url, 'POST', '/recommendations/items-to-items?country=US', {
      headers,
      body: { itemIds: ['s2'], count: 3, country: 'DE' },
    });
    const unifiedMulti = await post('/recommendations', {
      logicType: 'items-to-items',
      itemIds: ['s2'],
      count: 3,
      country: 'DE',
    });
    expect(ids(legacyMulti)).toEqual(ids(unifiedMulti));
  });

  it('accept overrides as query parameters, boosters comma-separated', async () => {
    const boosted = await get(
      `/recommendations/item-to-item/s1?count=2&returnProperties=false&boosters=${encodeURIComponent(
        `boost by 100 where 'category' in {"bags", "x"},boost by 2 where 'brand' = "acme"`,
      )}`,
    );
    expect(ids(boosted)[0]).toBe('b1');
    expectError(await get('/recommendations/item-to-item/s1?count=abc'), 400, 'INVALID_QUERY');
    expectError(await get('/recommendations/item-to-item/nope'), 404, 'ITEM_NOT_FOUND');
  });
});

describe('scenarios in recommendations', () => {
  it('apply the filter, boosters, maxItems and report the scenario; overrides replace only their field', async () => {
    const created = await post('/scenarios', {
      slug: 'pdp',
      logicType: 'item-to-item',
      filter: "'stock' > 0",
      boosters: ['boost by 10 where \'category\' = "bags"'],
      maxItems: 3,
    });
    expect(created.status).toBe(201);
    const response = await post('/recommendations', { scenario: 'pdp', itemId: 's1', count: 50 });
    expect(response.body).toMatchObject({ scenario: 'pdp', algorithm: 'co-occurrence', count: 3 });
    expect(ids(response)[0]).toBe('b1');
    expect(ids(response)).not.toContain('s3');
    const cleared = await post('/recommendations', {
      scenario: 'pdp',
      itemId: 's1',
      count: 50,
      filter: null,
      boosters: [],
    });
    expect(ids(cleared)[0]).toBe('s2');
    expect(cleared.body.count).toBe(3);
  });

  it('relaxes the filter as asked and says so', async () => {
    const response = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's1',
      count: 2,
      filter: "'category' = \"shoes\" and 'price' > 1000",
      autoRelaxFilters: true,
    });
    expect(response.body.filterRelaxation).toEqual({
      droppedClauses: ["'price' > 1000"],
      effectiveFilter: '\'category\' = "shoes"',
      droppedEntireFilter: false,
      originalFilter: "'category' = \"shoes\" and 'price' > 1000",
    });
    // s2 by co-occurrence, then shoes by popularity (s4 was viewed and bought).
    expect(ids(response)).toEqual(['s2', 's4']);
    const strict = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's1',
      filter: "'price' > 1000",
    });
    expect(strict.body).toMatchObject({ items: [], count: 0 });
    expect(strict.body.filterRelaxation).toBeUndefined();
  });
});

describe('freshness of effects', () => {
  it('shows history effects at once: recently-viewed and the purchase cap', async () => {
    await post('/ingestion/interactions', {
      interactions: [{ userId: 'fresh', itemId: 'b2', type: 'view' }],
    });
    expect(ids(await post('/recommendations', { logicType: 'recently-viewed', userId: 'fresh' }))).toEqual([
      'b2',
    ]);
    await post('/ingestion/interactions', {
      interactions: [{ userId: 'fresh', itemId: 'b3', type: 'view' }],
    });
    expect(ids(await post('/recommendations', { logicType: 'recently-viewed', userId: 'fresh' }))).toEqual([
      'b3',
      'b2',
    ]);

    // The buyer purchased s4: with a 10% cap on 5 items, at most one purchased item stays.
    await post('/ingestion/interactions', {
      interactions: [{ userId: 'buyer', itemId: 's1', type: 'purchase' }],
    });
    const capped = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 's2',
      userId: 'buyer',
      count: 5,
    });
    const purchased = ids(capped).filter((id) => id === 's1' || id === 's4');
    expect(purchased).toHaveLength(1);
    expect(capped.body.count).toBe(5);
    const uncapped = await post('/recommendations', { logicType: 'item-to-item', itemId: 's2', count: 5 });
    expect(ids(uncapped).filter((id) => id === 's1' || id === 's4')).toHaveLength(2);
  });

  it('shows new co-occurrences within 5 seconds', async () => {
    // The 5 s count from this test's write alone: the builds earlier writes made due are done first.
    await everyModelCaughtUp(daemon.url);
    const pair = Array.from({ length: 6 }, (_, u) => [
      { userId: `pair${u}`, itemId: 'b3', type: 'view' },
      { userId: `pair${u}`, itemId: 'b4', type: 'view' },
    ]).flat();
    expect((await post('/ingestion/interactions', { interactions: pair })).status).toBe(200);
    await eventually(async () => {
      const response = await post('/recommendations', {
        logicType: 'item-to-item',
        itemId: 'b4',
        count: 1,
        noCache: true,
      });
      expect(ids(response)).toEqual(['b3']);
    }, 5000);
  });
});

describe('GET /recommendations/algorithms', () => {
  it('lists every algorithm and filters by logic type', async () => {
    const all = await get('/recommendations/algorithms');
    const names = all.body.data.map((algorithm: { name: string }) => algorithm.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'weighted-history',
        'co-occurrence',
        'multi-seed-co-occurrence',
        'recently-viewed',
      ]),
    );
    const forUsers = await get('/recommendations/algorithms/user-to-item');
    expect(forUsers.body.data.find((a: { name: string }) => a.name === 'weighted-history')).toMatchObject({
      logicTypes: ['user-to-item'],
      isDefault: { 'user-to-item': true },
      description: expect.any(String),
    });
    expect(
      forUsers.body.data.every((a: { logicTypes: string[] }) => a.logicTypes.includes('user-to-item')),
    ).toBe(true);
    expectError(await get('/recommendations/algorithms/sideways'), 400, 'INVALID_QUERY');
  });
});
