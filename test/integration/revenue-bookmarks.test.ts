import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveSegments, tableDir } from '../../src/lake/layout.js';
import {
  call,
  createTenant,
  expectError,
  startDaemonProcess,
  removeDataDir,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';
import { modelCaughtUp } from '../support/models.js';
import { queryLake } from '../support/store-file.js';

/**
 * Revenue (amount, price and profit on purchases and carts) and bookmarks through the daemon's HTTP API
 * (docs/guide.md, "Revenue" and "Bookmarks"): validation, the sums of the summaries and experiment
 * results, the user export, the lake, and a bookmark's weight in histories.
 */

const TENANT = 'till';
const WINDOW = 'from=2026-03-01&to=2026-03-04';
let daemon: DaemonProcess;
let headers: Record<string, string>;

const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
const get = async (route: string) => {
  const response = await call(daemon.url, 'GET', route, { headers });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
};

beforeAll(async () => {
  daemon = await startDaemonProcess();
  headers = tenantHeaders(await createTenant(daemon.url, TENANT));
  expect(
    (await post('/ingestion/items', { items: ['a', 'b', 'c', 'd'].map((externalId) => ({ externalId })) }))
      .status,
  ).toBe(200);
  for (const slug of ['home', 'pdp'])
    expect((await post('/scenarios', { slug, logicType: 'user-to-item' })).status).toBe(201);
  // An answer of `home` whose recommId a later purchase carries without the scenario's slug.
  expect(
    (
      await post('/ingestion/impressions', {
        impressions: [
          {
            userId: 'u2',
            itemIds: ['b', 'c'],
            scenarioSlug: 'home',
            recommId: 'rec-home-1',
            timestamp: '2026-03-01T09:00:00Z',
          },
        ],
      })
    ).status,
  ).toBe(200);
  const accepted = await post('/ingestion/interactions', {
    interactions: [
      {
        userId: 'u1',
        itemId: 'a',
        type: 'purchase',
        scenarioSlug: 'home',
        amount: 2,
        price: 30,
        profit: 6,
        timestamp: '2026-03-01T10:00:00Z',
      },
      {
        userId: 'u2',
        itemId: 'b',
        type: 'purchase',
        recommId: 'rec-home-1',
        price: 10.1,
        profit: -1,
        timestamp: '2026-03-01T11:00:00Z',
      },
      // A lone price: the amount is 1.
      {
        userId: 'u4',
        itemId: 'c',
        type: 'purchase',
        scenarioSlug: 'pdp',
        price: 7.2,
        timestamp: '2026-03-02T10:00:00Z',
      },
      // A cart's price is stored, not counted as revenue; a purchase without a price counts 0.
      {
        userId: 'u3',
        itemId: 'c',
        type: 'cart',
        scenarioSlug: 'home',
        price: 5,
        timestamp: '2026-03-02T11:00:00Z',
      },
      {
        userId: 'u5',
        itemId: 'd',
        type: 'purchase',
        scenarioSlug: 'home',
        timestamp: '2026-03-03T10:00:00Z',
      },
      {
        userId: 'u1',
        itemId: 'd',
        type: 'bookmark',
        scenarioSlug: 'home',
        timestamp: '2026-03-03T11:00:00Z',
      },
      { userId: 'u1', itemId: 'c', type: 'view', timestamp: '2026-03-03T12:00:00Z' },
      // Before the window.
      {
        userId: 'u1',
        itemId: 'a',
        type: 'purchase',
        scenarioSlug: 'home',
        price: 1000,
        timestamp: '2026-02-28T23:00:00Z',
      },
    ],
  });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

describe('amount, price and profit', () => {
  it('are accepted on purchases and carts only, with amount > 0 and price ≥ 0; a refused batch stores nothing', async () => {
    const before = await get(`/analytics/summary?${WINDOW}`);
    const event = (fields: Record<string, unknown>) => ({
      userId: 'bad',
      itemId: 'a',
      timestamp: '2026-03-02T00:00:00Z',
      ...fields,
    });
    for (const [bad, message] of [
      [{ type: 'view', price: 3 }, /purchase and cart events only/],
      [{ type: 'bookmark', amount: 1 }, /purchase and cart events only/],
      [{ type: 'rating', profit: 1 }, /purchase and cart events only/],
      [{ type: 'purchase', amount: 0 }, /amount/],
      [{ type: 'purchase', amount: -2, price: 3 }, /amount/],
      [{ type: 'cart', price: -0.01 }, /price/],
      [{ type: 'purchase', price: '9.99' }, /price/],
    ] as const) {
      const response = await post('/ingestion/interactions', {
        interactions: [event({ type: 'purchase', price: 1 }), event(bad)],
      });
      expectError(response, 400, 'INVALID_BODY');
      expect(response.body.message).toMatch(message);
    }
    expect(await get(`/analytics/summary?${WINDOW}`)).toEqual(before);
  });

  it('sum to revenue and profit in the summary, and to revenue in the scenario summary and its days', async () => {
    expect(await get(`/analytics/summary?${WINDOW}`)).toMatchObject({
      interactions: 7,
      byType: { view: 1, cart: 1, purchase: 4, rating: 0, bookmark: 1 },
      // 30 + 10.1 + 7.2 (the cart's 5 and the purchase before the window left out); profits 6 − 1.
      revenue: 47.3,
      profit: 5,
    });
    // home: its own purchase, and the one carrying the recommId of its answer.
    expect(await get(`/analytics/scenario/home/summary?${WINDOW}`)).toEqual({
      impressions: 2,
      clicks: 0,
      carts: 1,
      purchases: 2,
      ctr: 0,
      conversion: 0,
      revenue: 40.1,
    });
    expect((await get(`/analytics/scenario/home/funnel-volume?${WINDOW}`)).data).toEqual([
      { date: '2026-03-01', impressions: 2, clicks: 0, carts: 0, purchases: 1, revenue: 40.1 },
      { date: '2026-03-02', impressions: 0, clicks: 0, carts: 1, purchases: 0, revenue: 0 },
      { date: '2026-03-03', impressions: 0, clicks: 0, carts: 0, purchases: 1, revenue: 0 },
      { date: '2026-03-04', impressions: 0, clicks: 0, carts: 0, purchases: 0, revenue: 0 },
    ]);
    expect((await get(`/analytics/scenario/pdp/summary?${WINDOW}`)).revenue).toBe(7.2);
  });

  it('are in the user export (amount 1 when not given), and in the lake', async () => {
    const u1 = await get('/users/u1/export');
    expect(
      u1.interactions.map((e: Record<string, unknown>) => [e.type, e.amount, e.price, e.profit]),
    ).toEqual([
      ['purchase', 2, 30, 6],
      ['bookmark', undefined, undefined, undefined],
      ['view', undefined, undefined, undefined],
      ['purchase', 1, 1000, null],
    ]);
    const u3 = await get('/users/u3/export');
    expect(u3.interactions).toMatchObject([{ type: 'cart', amount: 1, price: 5, profit: null }]);

    // A model build exports the tenant's interactions to the lake first.
    await modelCaughtUp(daemon.url, TENANT);
    expect(liveSegments(tableDir(daemon.dataDir, TENANT, 'interactions')).length).toBeGreaterThan(0);
    const rows = await queryLake(
      daemon.dataDir,
      TENANT,
      'interactions',
      (source) => `SELECT user_id, type, amount, price, profit FROM ${source}
        WHERE type IN ('purchase', 'cart') ORDER BY seq`,
    );
    expect(rows).toEqual([
      ['u1', 'purchase', 2, 30, 6],
      ['u2', 'purchase', 1, 10.1, -1],
      ['u4', 'purchase', 1, 7.2, null],
      ['u3', 'cart', 1, 5, null],
      ['u5', 'purchase', 1, null, null],
      ['u1', 'purchase', 1, 1000, null],
    ]);
  });

  it("give each experiment variant its revenue, revenue per user and Welch's t-test against the first", async () => {
    for (const slug of ['shop', 'shop-a', 'shop-b'])
      expect((await post('/scenarios', { slug, logicType: 'user-to-item' })).status).toBe(201);
    const experiment = {
      slug: 'price-test',
      baseScenario: 'shop',
      variants: [
        { scenario: 'shop-a', weight: 1 },
        { scenario: 'shop-b', weight: 1 },
      ],
    };
    expect((await post('/experiments', experiment)).status).toBe(201);
    const served = new Map<string, string>();
    for (let u = 0; u < 24; u++) {
      const answer = await post('/recommendations', { scenario: 'shop', userId: `x${u}`, count: 2 });
      expect(answer.status).toBe(200);
      served.set(`x${u}`, answer.body.scenario);
    }
    const usersOf = (variant: string) => [...served].filter(([, v]) => v === variant).map(([user]) => user);
    const [a, b] = [usersOf('shop-a'), usersOf('shop-b')];
    expect(a.length).toBeGreaterThanOrEqual(3);
    expect(b.length).toBeGreaterThanOrEqual(3);
    // In shop-a every other user spends 10; in shop-b every user spends 40 (two purchases of 20).
    const purchases = [
      ...a.filter((_, i) => i % 2 === 0).map((userId) => ({ userId, price: 10, scenarioSlug: 'shop-a' })),
      ...b.flatMap((userId) => [
        { userId, price: 20, scenarioSlug: 'shop-b' },
        { userId, price: 20, scenarioSlug: 'shop-b' },
      ]),
    ].map((event) => ({ ...event, itemId: 'd', type: 'purchase' }));
    expect((await post('/ingestion/interactions', { interactions: purchases })).status).toBe(200);

    const spentA: number[] = a.map((_, i) => (i % 2 === 0 ? 10 : 0));
    const revenueA = spentA.reduce((sum, value) => sum + value, 0);
    const revenueB = 40 * b.length;
    await eventually(async () => {
      const results = await get('/experiments/price-test/results');
      const [first, second] = results.variants;
      expect(first).toMatchObject({
        scenario: 'shop-a',
        users: a.length,
        purchases: Math.ceil(a.length / 2),
        revenue: revenueA,
        revenuePerUser: Math.round((revenueA / a.length) * 10_000) / 10_000,
        revenueSignificance: null,
      });
      expect(second).toMatchObject({
        scenario: 'shop-b',
        users: b.length,
        purchases: 2 * b.length,
        revenue: revenueB,
        revenuePerUser: 40,
      });
      // Every shop-b user spent 40, so its variance is 0 and Welch's test rests on shop-a's alone.
      const meanA = revenueA / a.length;
      const { lift, pValue, difference95 } = second.revenueSignificance;
      expect(lift).toBeCloseTo(40 / meanA - 1, 4);
      expect(pValue).toBeLessThan(0.001);
      expect(difference95[0]).toBeLessThan(40 - meanA);
      expect(difference95[1]).toBeGreaterThan(40 - meanA);
      expect(difference95[0]).toBeGreaterThan(0);
    });
  });
});

describe('bookmarks', () => {
  it("count in byType, never as a click or a purchase, and take the tenant's weight in histories", async () => {
    expect((await get(`/analytics/interactions-by-type?${WINDOW}`)).data).toContainEqual({
      type: 'bookmark',
      count: 1,
    });
    // The bookmark carries scenario home, yet home counts no click for it.
    expect((await get(`/analytics/scenario/home/summary?${WINDOW}`)).clicks).toBe(0);

    // Neighbours from other users: those who viewed `a` also viewed `b`.
    const viewers = Array.from({ length: 6 }, (_, i) => `n${i}`);
    const views = viewers.flatMap((userId) => [
      { userId, itemId: 'a', type: 'view' },
      { userId, itemId: 'b', type: 'view' },
    ]);
    // Item c is the most popular, so that a user without a history gets it first.
    const popular = Array.from({ length: 80 }, (_, i) => ({ userId: `p${i}`, itemId: 'c', type: 'view' }));
    expect((await post('/ingestion/interactions', { interactions: [...views, ...popular] })).status).toBe(
      200,
    );
    await modelCaughtUp(daemon.url, TENANT);

    const first = async (userId: string) => {
      const answer = await post('/recommendations', {
        logicType: 'user-to-item',
        userId,
        count: 1,
        noCache: true,
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return (answer.body.items as { itemId: string }[])[0]?.itemId;
    };
    // Popularity is counted anew about once a second.
    await eventually(async () => expect(await first('keeper')).toBe('c'));
    // A bookmark of `a` alone makes its neighbour `b` the first recommendation.
    expect(
      (
        await post('/ingestion/interactions', {
          interactions: [{ userId: 'keeper', itemId: 'a', type: 'bookmark' }],
        })
      ).status,
    ).toBe(200);
    expect(await first('keeper')).toBe('b');

    // The tenant's weight for bookmarks is what a bookmark without a weight of its own is stored with.
    const settings = await call(daemon.url, 'PUT', '/catalog/tenant-settings', {
      headers,
      body: { interactionWeights: { bookmark: 5 } },
    });
    expect(settings.status).toBe(200);
    expect(settings.body.interactionWeights).toEqual({
      view: 1,
      cart: 2,
      purchase: 4,
      rating: 3,
      bookmark: 5,
    });
    expect(
      (
        await post('/ingestion/interactions', {
          interactions: [{ userId: 'keeper', itemId: 'd', type: 'bookmark' }],
        })
      ).status,
    ).toBe(200);
    const exported = await get('/users/keeper/export');
    expect(
      exported.interactions.map((e: { itemId: string; type: string; weight: number }) => [
        e.itemId,
        e.type,
        e.weight,
      ]),
    ).toEqual([
      ['a', 'bookmark', 2],
      ['d', 'bookmark', 5],
    ]);
  });
});

describe('after a crash', () => {
  it('keeps every acknowledged price, profit and bookmark', async () => {
    const before = await get(`/analytics/summary?${WINDOW}`);
    const paid = await post('/ingestion/interactions', {
      interactions: [
        {
          userId: 'late',
          itemId: 'b',
          type: 'purchase',
          amount: 3,
          price: 2.5,
          profit: 0.5,
          timestamp: '2026-03-04T08:00:00Z',
        },
        { userId: 'late', itemId: 'c', type: 'bookmark', timestamp: '2026-03-04T09:00:00Z' },
      ],
    });
    expect(paid.status).toBe(200);
    await daemon.kill();
    daemon = await startDaemonProcess({ dataDir: daemon.dataDir });
    expect(await get(`/analytics/summary?${WINDOW}`)).toMatchObject({
      interactions: before.interactions + 2,
      byType: { bookmark: before.byType.bookmark + 1 },
      revenue: before.revenue + 2.5,
      profit: before.profit + 0.5,
    });
    expect((await get('/users/late/export')).interactions).toMatchObject([
      { type: 'purchase', amount: 3, price: 2.5, profit: 0.5 },
      { type: 'bookmark', weight: 5 },
    ]);
  });
});
