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

let daemon: DaemonProcess;
let headers: Record<string, string>;
const WINDOW = 'from=2026-03-01&to=2026-03-04';

const get = async (route: string) => {
  const response = await call(daemon.url, 'GET', route, { headers });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
};

beforeAll(async () => {
  daemon = await startDaemonProcess();
  headers = tenantHeaders(await createTenant(daemon.url, 'stats'));
  const post = async (route: string, body: unknown) =>
    expect((await call(daemon.url, 'POST', route, { headers, body })).status).toBeLessThan(300);
  await post('/ingestion/items', { items: ['a', 'b', 'c', 'd'].map((externalId) => ({ externalId })) });
  await post('/scenarios', { slug: 'home', logicType: 'user-to-item' });
  await post('/ingestion/impressions', {
    impressions: [
      { userId: 'u1', itemIds: ['a', 'b', 'c'], scenarioSlug: 'home', timestamp: '2026-03-01T10:00:00Z' },
      { userId: 'u2', itemIds: ['a', 'b'], scenarioSlug: 'home', timestamp: '2026-03-02T10:00:00Z' },
      // Tenant-wide only: no scenario.
      { userId: 'u3', itemIds: ['c'], timestamp: '2026-03-02T11:00:00Z' },
      // After the window.
      { userId: 'u3', itemIds: ['a'], scenarioSlug: 'home', timestamp: '2026-03-05T00:00:00Z' },
    ],
  });
  const event = (
    who: Record<string, string>,
    itemId: string,
    type: string,
    timestamp: string,
    scenarioSlug?: string,
  ) => ({
    ...who,
    itemId,
    type,
    timestamp,
    ...(scenarioSlug && { scenarioSlug }),
  });
  await post('/ingestion/interactions', {
    interactions: [
      event({ userId: 'u1' }, 'a', 'view', '2026-03-01T10:01:00Z', 'home'),
      event({ userId: 'u1' }, 'a', 'cart', '2026-03-01T10:02:00Z', 'home'),
      event({ userId: 'u1' }, 'a', 'purchase', '2026-03-01T10:03:00Z', 'home'),
      event({ userId: 'u2' }, 'b', 'view', '2026-03-02T10:01:00Z', 'home'),
      event({ userId: 'u2' }, 'a', 'view', '2026-03-02T23:59:59Z'),
      event({ sessionId: 's1' }, 'c', 'view', '2026-03-04T00:00:00Z'),
      event({ userId: 'u3' }, 'c', 'rating', '2026-03-04T12:00:00Z'),
      // Before the window.
      event({ userId: 'u1' }, 'b', 'view', '2026-02-28T23:59:59Z', 'home'),
    ],
  });
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

describe('tenant analytics', () => {
  it('summarizes the window: distinct users and sessions, every impressed item, counts by type', async () => {
    expect(await get(`/analytics/summary?${WINDOW}`)).toEqual({
      items: 4,
      users: 4,
      interactions: 7,
      impressions: 6,
      byType: { view: 4, cart: 1, purchase: 1, rating: 1, bookmark: 0 },
      revenue: 0,
      profit: 0,
    });
  });

  it('gives a zero-filled daily volume and the counts by type', async () => {
    expect(await get(`/analytics/interaction-volume?${WINDOW}`)).toEqual({
      data: [
        { date: '2026-03-01', count: 3 },
        { date: '2026-03-02', count: 2 },
        { date: '2026-03-03', count: 0 },
        { date: '2026-03-04', count: 2 },
      ],
    });
    expect(await get(`/analytics/interactions-by-type?${WINDOW}`)).toEqual({
      data: [
        { type: 'view', count: 4 },
        { type: 'cart', count: 1 },
        { type: 'purchase', count: 1 },
        { type: 'rating', count: 1 },
        { type: 'bookmark', count: 0 },
      ],
    });
    // The window's bounds are whole UTC days, both included.
    expect((await get('/analytics/interaction-volume?from=2026-02-28&to=2026-02-28')).data).toEqual([
      { date: '2026-02-28', count: 1 },
    ]);
  });

  it('lists top items, and top recommended items from events with a scenario only', async () => {
    expect(await get(`/analytics/top-items?${WINDOW}&limit=2`)).toEqual({
      data: [
        { itemId: 'a', count: 4 },
        { itemId: 'c', count: 2 },
      ],
    });
    expect(await get(`/analytics/top-recommended?${WINDOW}`)).toEqual({
      data: [
        { itemId: 'a', impressions: 2, clicks: 1, carts: 1, purchases: 1, ctr: 0.5, conversion: 1 },
        { itemId: 'b', impressions: 2, clicks: 1, carts: 0, purchases: 0, ctr: 0.5, conversion: 0 },
        { itemId: 'c', impressions: 1, clicks: 0, carts: 0, purchases: 0, ctr: 0, conversion: 0 },
      ],
    });
  });

  it('ranks the most shown first whatever the limit', async () => {
    expect(
      (await get(`/analytics/top-recommended?${WINDOW}&limit=2`)).data.map(
        (r: { itemId: string }) => r.itemId,
      ),
    ).toEqual(['a', 'b']);
    expect((await get(`/analytics/top-recommended?${WINDOW}&limit=1`)).data).toEqual([
      { itemId: 'a', impressions: 2, clicks: 1, carts: 1, purchases: 1, ctr: 0.5, conversion: 1 },
    ]);
    expect(
      (await get(`/analytics/scenario/home/top-items?${WINDOW}&limit=2`)).data.map(
        (r: { itemId: string }) => r.itemId,
      ),
    ).toEqual(['a', 'b']);
  });

  it('measures catalog coverage from the answers recommendations gave', async () => {
    const shown = new Set<string>();
    for (const userId of ['u1', 'u2']) {
      const answer = await call(daemon.url, 'POST', '/recommendations', {
        headers,
        body: { logicType: 'user-to-item', userId, count: 2 },
      });
      for (const item of answer.body.items) shown.add(item.itemId);
    }
    await eventually(async () =>
      expect(await get('/analytics/catalog-coverage')).toEqual({
        catalogSize: 4,
        recommendedItems: shown.size,
        coverage: Math.round((shown.size / 4) * 10_000) / 10_000,
      }),
    );
  });
});

describe('per-algorithm analytics', () => {
  it('joins impressions and clicks that carry a recommId to the answer that caused them', async () => {
    const answer = await call(daemon.url, 'POST', '/recommendations', {
      headers,
      body: { logicType: 'item-to-item', itemId: 'a', count: 2 },
    });
    const { recommId, algorithm } = answer.body as { recommId: string; algorithm: string };
    const shown = answer.body.items.map((item: { itemId: string }) => item.itemId);
    expect(shown.length).toBeGreaterThan(0);
    const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
    expect(
      (
        await post('/ingestion/impressions', {
          impressions: [{ userId: 'u9', itemIds: shown, recommId, scenarioSlug: 'home' }],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await post('/ingestion/interactions', {
          interactions: [
            { userId: 'u9', itemId: shown[0], type: 'view', recommId, scenarioSlug: 'home' },
            // Not a click: no recommId.
            { userId: 'u9', itemId: shown[0], type: 'view', scenarioSlug: 'home' },
          ],
        })
      ).status,
    ).toBe(200);
    await eventually(async () => {
      const { data } = await get('/analytics/algorithms');
      expect(data).toContainEqual({
        algorithm,
        answers: expect.any(Number),
        impressions: shown.length,
        clicks: 1,
        ctr: Math.round((1 / shown.length) * 10_000) / 10_000,
      });
    });
  });
});

describe('scenario analytics', () => {
  it('gives the funnel, its daily volume and its items', async () => {
    expect(await get(`/analytics/scenario/home/summary?${WINDOW}`)).toEqual({
      impressions: 5,
      clicks: 2,
      carts: 1,
      purchases: 1,
      ctr: 0.4,
      conversion: 0.5,
      revenue: 0,
    });
    expect(await get(`/analytics/scenario/home/funnel-volume?${WINDOW}`)).toEqual({
      data: [
        { date: '2026-03-01', impressions: 3, clicks: 1, carts: 1, purchases: 1, revenue: 0 },
        { date: '2026-03-02', impressions: 2, clicks: 1, carts: 0, purchases: 0, revenue: 0 },
        { date: '2026-03-03', impressions: 0, clicks: 0, carts: 0, purchases: 0, revenue: 0 },
        { date: '2026-03-04', impressions: 0, clicks: 0, carts: 0, purchases: 0, revenue: 0 },
      ],
    });
    expect(await get(`/analytics/scenario/home/top-items?${WINDOW}`)).toEqual({
      data: [
        { itemId: 'a', impressions: 2, clicks: 1, carts: 1, purchases: 1, ctr: 0.5 },
        { itemId: 'b', impressions: 2, clicks: 1, carts: 0, purchases: 0, ctr: 0.5 },
        { itemId: 'c', impressions: 1, clicks: 0, carts: 0, purchases: 0, ctr: 0 },
      ],
    });
  });

  it('answers zeros for a scenario without events, and 404 for an unknown one', async () => {
    expect(
      (
        await call(daemon.url, 'POST', '/scenarios', {
          headers,
          body: { slug: 'quiet', logicType: 'item-to-item' },
        })
      ).status,
    ).toBe(201);
    expect(await get(`/analytics/scenario/quiet/summary?${WINDOW}`)).toEqual({
      impressions: 0,
      clicks: 0,
      carts: 0,
      purchases: 0,
      ctr: 0,
      conversion: 0,
      revenue: 0,
    });
    expectError(
      await call(daemon.url, 'GET', '/analytics/scenario/nope/summary', { headers }),
      404,
      'SCENARIO_NOT_FOUND',
    );
  });
});

describe('analytics parameters', () => {
  it.each([
    ['from=2026-13-01'],
    ['from=2026-02-30'],
    ['from=yesterday'],
    ['from=2026-03-04&to=2026-03-01'],
    ['limit=0'],
    ['limit=abc'],
    ['from=2000-01-01&to=2026-01-01'],
    ['unknown=1'],
  ])('%s is 400 INVALID_QUERY', async (query) => {
    expectError(
      await call(daemon.url, 'GET', `/analytics/summary?${query}`, { headers }),
      400,
      'INVALID_QUERY',
    );
  });

  it('needs a tenant credential', async () => {
    expectError(
      await call(daemon.url, 'GET', '/analytics/summary', { headers: { 'x-tenant-id': 'stats' } }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('experiments', () => {
  it('serve each user a sticky variant of the base scenario, say so, and report results with significance', async () => {
    const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
    for (const slug of ['shop', 'shop-a', 'shop-b']) {
      expect((await post('/scenarios', { slug, logicType: 'user-to-item' })).status).toBe(201);
    }
    const experiment = {
      slug: 'shop-test',
      baseScenario: 'shop',
      variants: [
        { scenario: 'shop-a', weight: 1 },
        { scenario: 'shop-b', weight: 1 },
      ],
      status: 'running',
    };
    const created = await post('/experiments', experiment);
    expect(created.status).toBe(201);
    expect(created.body).toEqual(experiment);
    expectError(await post('/experiments', experiment), 409, 'CONFLICT');
    expect((await get('/experiments')).data).toEqual([experiment]);

    const served = new Map<string, string>();
    for (let u = 0; u < 20; u++) {
      const answer = await post('/recommendations', { scenario: 'shop', userId: `x${u}`, count: 2 });
      expect(answer.status).toBe(200);
      expect(answer.body.experiment).toEqual({ slug: 'shop-test', variant: answer.body.scenario });
      served.set(`x${u}`, answer.body.scenario);
      const again = await post('/recommendations', {
        scenario: 'shop',
        userId: `x${u}`,
        count: 2,
        noCache: true,
      });
      expect(again.body.scenario).toBe(answer.body.scenario);
    }
    expect(new Set(served.values())).toEqual(new Set(['shop-a', 'shop-b']));
    // Assignment is by user: a user-to-item placement without one is a missing seed, as ever.
    expectError(await post('/recommendations', { scenario: 'shop', count: 2 }), 400, 'MISSING_SEED');

    // Clients log with the variant's slug: shop-a shows 100 items and gets 10 clicks, shop-b 100 and 30.
    const impressions = ['shop-a', 'shop-b'].map((scenarioSlug) => ({
      userId: 'x0',
      itemIds: Array.from({ length: 100 }, (_, i) => `i${i}`),
      scenarioSlug,
    }));
    expect((await post('/ingestion/impressions', { impressions })).status).toBe(200);
    const clicks = (scenarioSlug: string, count: number) =>
      Array.from({ length: count }, (_, i) => ({ userId: `c${i}`, itemId: 'a', type: 'view', scenarioSlug }));
    expect(
      (
        await post('/ingestion/interactions', {
          interactions: [...clicks('shop-a', 10), ...clicks('shop-b', 30)],
        })
      ).status,
    ).toBe(200);
    const usersOf = (variant: string) => [...served.values()].filter((v) => v === variant).length;
    await eventually(async () => {
      const results = await get('/experiments/shop-test/results');
      expect(results.variants).toEqual([
        {
          scenario: 'shop-a',
          users: usersOf('shop-a'),
          impressions: 100,
          clicks: 10,
          purchases: 0,
          ctr: 0.1,
          conversion: 0,
          significance: null,
          revenue: 0,
          revenuePerUser: 0,
          revenueSignificance: null,
        },
        {
          scenario: 'shop-b',
          users: usersOf('shop-b'),
          impressions: 100,
          clicks: 30,
          purchases: 0,
          ctr: 0.3,
          conversion: 0,
          significance: {
            metric: 'ctr',
            lift: 2,
            pValue: expect.any(Number),
            difference95: expect.any(Array),
          },
          revenue: 0,
          revenuePerUser: 0,
          // Nobody bought: equal means, no difference.
          revenueSignificance: { lift: null, pValue: 1, difference95: [0, 0] },
        },
      ]);
      expect(results.variants[1].significance.pValue).toBeLessThan(0.001);
    });

    // A window before any of it counts nothing.
    const before = await get('/experiments/shop-test/results?from=2020-01-01&to=2020-01-31');
    expect(
      before.variants.map((v: { users: number; impressions: number }) => [v.users, v.impressions]),
    ).toEqual([
      [0, 0],
      [0, 0],
    ]);

    // Stopped: the base scenario serves, without an experiment field.
    expect(
      (
        await call(daemon.url, 'PUT', '/experiments/shop-test', {
          headers,
          body: { ...experiment, status: 'stopped' },
        })
      ).status,
    ).toBe(200);
    const base = await post('/recommendations', { scenario: 'shop', userId: 'x1', count: 2 });
    expect(base.body.scenario).toBe('shop');
    expect(base.body.experiment).toBeUndefined();
    expectError(await call(daemon.url, 'GET', '/experiments/none/results', { headers }), 404, 'NOT_FOUND');
    expect((await call(daemon.url, 'DELETE', '/experiments/shop-test', { headers })).status).toBe(204);
  });

  it('keep a variant of weight 0 without assigning it, and refuse one where every weight is 0', async () => {
    const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
    for (const slug of ['zero', 'zero-a', 'zero-b']) {
      expect((await post('/scenarios', { slug, logicType: 'user-to-item' })).status).toBe(201);
    }
    const experiment = {
      slug: 'zero-test',
      baseScenario: 'zero',
      variants: [
        { scenario: 'zero-a', weight: 0 },
        { scenario: 'zero-b', weight: 3 },
      ],
      status: 'running',
    };
    const silent = { ...experiment, variants: experiment.variants.map((v) => ({ ...v, weight: 0 })) };
    const refused = await post('/experiments', silent);
    expectError(refused, 400, 'INVALID_BODY');
    expect(refused.body.details).toEqual([expect.objectContaining({ path: 'variants' })]);
    expect((await post('/experiments', experiment)).body).toEqual(experiment);
    for (let u = 0; u < 30; u++) {
      const answer = await post('/recommendations', { scenario: 'zero', userId: `z${u}`, count: 1 });
      expect(answer.body.experiment).toEqual({ slug: 'zero-test', variant: 'zero-b' });
    }
    const results = await get('/experiments/zero-test/results');
    expect(results.variants.map((v: { scenario: string }) => v.scenario)).toEqual(['zero-a', 'zero-b']);
    expect(results.variants[0].users).toBe(0);
  });
});
