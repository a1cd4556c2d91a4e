/**
 * Every row of SPEC.md's pipeline table (stages 1-10) and of the unified request table of
 * `POST /recommendations`, each with the behaviour it promises, checked through `recommendList` (via the
 * fixture's `rank`) or `Recommender.recommend`.
 */
import { describe, expect, it } from 'vitest';
import { LocalRanker } from '../../../src/engine/ranker.js';
import { Recommender } from '../../../src/engine/recommender.js';
import type { RecommendationRequest } from '../../../src/engine/request.js';
import { ResultCache } from '../../../src/engine/result-cache.js';
import {
  answerNow,
  apiErrorOf,
  buildTenant,
  DAY,
  daysAgo,
  item,
  NOW,
  rank,
  rankIds,
  request,
  type RequestBody,
} from '../../support/tenant-fixture.js';
import type { TenantState } from '../../../src/state/tenant-state.js';

/**
 * Seed s (shoes). Its co-occurrence neighbours: gone .75 (unavailable), ghost .6 (events only), a .5,
 * b .25, c .125. 30-day counts: d 30 (in DE), e 21 (20 in DE), a 2, b 1, c 1, gone 1, s 0, f 0 (median 1:
 * s and f are long-tail). The list for s without options: own a, b, c, then the fill d, e, f.
 */
function shop() {
  return buildTenant({
    items: [
      item('s', { category: 'shoes', attributes: { name: 'Seed', price: 50, brand: 'acme' } }),
      item('a', { category: 'shoes', attributes: { name: 'Alpha', price: 20, brand: 'acme', color: 'red' } }),
      item('b', { category: 'shoes', attributes: { name: 'Beta', price: 80, brand: 'zeta' } }),
      item('c', {
        category: 'bags',
        attributes: { name: 'Gamma', price: 30, brand: 'acme' },
        createdAt: daysAgo(2),
      }),
      item('d', { category: 'bags', attributes: { name: 'Delta', price: 120, brand: 'zeta' } }),
      item('e', { category: 'hats', attributes: { name: 'Epsilon', price: 10 } }),
      item('f', { category: 'hats', attributes: { name: 'Phi', price: 15 } }),
      item('gone', { category: 'shoes', attributes: { name: 'Gone', price: 1 }, available: false }),
    ],
    events: [
      { item: 'a', user: 'u', ts: daysAgo(3) },
      { item: 'c', user: 'u', ts: daysAgo(2) },
      { item: 'gone', user: 'u', ts: daysAgo(1) },
      { item: 'ghost', user: 'u', ts: daysAgo(1) },
      { item: 'e', session: 'sess_9', ts: daysAgo(1) },
      { item: 'a', user: 'buyer', type: 'purchase', ts: daysAgo(10) },
      { item: 'b', user: 'buyer', type: 'purchase', ts: daysAgo(10) },
      { item: 'd', country: 'DE', times: 30 },
      { item: 'e', country: 'DE', times: 20 },
    ],
    neighbours: [
      ['s', 'gone', 0.75],
      ['s', 'ghost', 0.6],
      ['s', 'a', 0.5],
      ['s', 'b', 0.25],
      ['s', 'c', 0.125],
      ['c', 'e', 0.5],
    ],
    rules: [
      { slug: 'acme-only', type: 'filter', expression: `'brand' = "acme"`, priority: 2 },
      { slug: 'cheap', type: 'filter', expression: `'price' < 100`, priority: 1 },
      { slug: 'red-boost', type: 'booster', expression: `boost by 3 where 'color' = "red"` },
    ],
    segmentations: [
      { segmentationId: 'by-category', type: 'property', property: 'category' },
      { segmentationId: 'by-brand', type: 'property', property: 'attributes.brand' },
    ],
    scenarios: [
      { slug: 'pdp', logicType: 'item-to-item' },
      { slug: 'pdp-category', logicType: 'item-to-item', algorithm: 'category-popularity' },
      { slug: 'pdp-filtered', logicType: 'item-to-item', filter: `'price' < 100`, rulesSlugs: ['acme-only'] },
      {
        slug: 'pdp-boosted',
        logicType: 'item-to-item',
        rulesSlugs: ['red-boost'],
        boosters: [`boost by 4 where 'brand' = "acme"`],
      },
      {
        slug: 'pdp-diverse',
        logicType: 'item-to-item',
        constraints: { maxPerCategory: 1, freshnessBoostDays: 7 },
      },
      {
        slug: 'pdp-tail',
        logicType: 'item-to-item',
        constraints: { injectLongTail: true, longTailPercentage: 50 },
      },
      {
        slug: 'pdp-segments',
        logicType: 'item-to-item',
        segmentationId: 'by-category',
        itemsPerSegment: 1,
        autoExpandSegments: false,
      },
      { slug: 'pdp-short', logicType: 'item-to-item', maxItems: 3 },
      {
        slug: 'pdp-min',
        logicType: 'item-to-item',
        constraints: { maxPerCategory: 1 },
        minItems: 4,
        autoRelaxConstraints: true,
      },
      {
        slug: 'pdp-relax',
        logicType: 'item-to-item',
        filter: `'price' < 100 and 'brand' = "nobody"`,
        autoRelaxFilters: true,
      },
      { slug: 'history', logicType: 'recently-viewed' },
    ],
  });
}

const tenant = shop();
const pdp: RequestBody = { scenario: 'pdp', itemId: 's' };
const BASE = ['a', 'b', 'c', 'd', 'e', 'f'];

/** 7-day lift in DE: I = 8 catalog items, N = 55 events (u's 4, sess_9's 1, DE's 50), N_DE = 50. */
function liftDE(inDE: number, everywhere: number): number {
  return (inDE + 1) / (50 + 8) / ((everywhere + 1) / (55 + 8));
}

function scoresOf(body: RequestBody, at = NOW): Record<string, number> {
  const list = rank(tenant, body, at);
  return Object.fromEntries(
    Array.from(list.ids, (id, i) => [tenant.catalog.externalIds[id], list.scores![i]]),
  );
}

type Row = [name: string, quote: string, check: () => void];

const PIPELINE: Row[] = [
  [
    '1 Resolve',
    "Load the scenario by slug and choose the algorithm (the logic type's default when the scenario sets none).",
    () => {
      expect(rank(tenant, pdp)).toMatchObject({ scenario: 'pdp', algorithm: 'co-occurrence' });
      expect(rank(tenant, { scenario: 'pdp-category', itemId: 's' }).algorithm).toBe('category-popularity');
      expect(apiErrorOf(() => rank(tenant, { scenario: 'missing', itemId: 's' })).code).toBe(
        'SCENARIO_NOT_FOUND',
      );
    },
  ],
  [
    '2 Candidates',
    'Candidates come from the event store, the vector index, factor models, or a category fallback, depending on the algorithm.',
    () => {
      // Co-occurrence model neighbours of s first, then the popularity fill.
      expect(rankIds(tenant, pdp)).toEqual(BASE);
      // b has no neighbours: the category fallback (shoes by popularity: a, then s) before the fill.
      expect(rankIds(tenant, { scenario: 'pdp', itemId: 'b' })).toEqual(['a', 's', 'd', 'e', 'c', 'f']);
      // weighted-history: u's history (event store) expanded through c's neighbour e.
      const history = scoresOf({ logicType: 'user-to-item', userId: 'u' });
      expect(Object.keys(history)[0]).toBe('e');
      expect(history.e).toBeCloseTo(0.5 * Math.pow(0.5, 2 / 90), 6);
    },
  ],
  [
    '3 Availability',
    'Items with available=false are dropped.',
    () => {
      for (const body of [
        pdp,
        { logicType: 'user-to-item', userId: 'u' },
        { logicType: 'items-to-items', itemIds: ['s', 'ghost'] },
        { logicType: 'similar-products', itemId: 's' },
        { logicType: 'recently-viewed', userId: 'u' },
      ] satisfies RequestBody[]) {
        expect(rankIds(tenant, body)).not.toContain('gone');
        expect(rankIds(tenant, body)).not.toContain('ghost');
      }
      expect(rankIds(tenant, { logicType: 'recently-viewed', userId: 'u' })).toEqual(['c', 'a']);
    },
  ],
  [
    '4 Geo lift',
    'When a valid country is given, scores are multiplied by a country, cluster or global lift. Skipped for the weighted-history algorithm (only its fill candidates use geo data) and for recently-viewed.',
    () => {
      const lifted = scoresOf({ ...pdp, country: 'DE' });
      expect(lifted.a).toBeCloseTo(0.5 * liftDE(0, 1), 12);
      expect(lifted.b).toBeCloseTo(0.25 * liftDE(0, 0), 12);
      expect(lifted.c).toBeCloseTo(0.125 * liftDE(0, 1), 12);
      // AT has no events of its own: the western-europe cluster (DE's counts) applies.
      expect(scoresOf({ ...pdp, country: 'AT' })).toEqual(lifted);
      // invalid or OTH: global.
      expect(scoresOf({ ...pdp, country: 'OTH' })).toEqual(scoresOf(pdp));
      expect(scoresOf({ ...pdp, country: 'ZZ' })).toEqual(scoresOf(pdp));
      const history = { logicType: 'user-to-item', userId: 'u' } satisfies RequestBody;
      expect(scoresOf({ ...history, country: 'DE' }).e).toBe(scoresOf(history).e);
      expect(rankIds(tenant, { logicType: 'recently-viewed', userId: 'u', country: 'DE' })).toEqual([
        'c',
        'a',
      ]);
    },
  ],
  [
    '5 Filters',
    'The scenario filter and filter-type rules remove non-matching items.',
    () => {
      // price < 100 (scenario) and brand = acme (rule): a and c of the candidates.
      expect(rankIds(tenant, { scenario: 'pdp-filtered', itemId: 's' })).toEqual(['a', 'c']);
    },
  ],
  [
    '6 Boosters',
    'For each matching booster, score = score x factor; boosters stack by sequential multiplication on the already-lifted score.',
    () => {
      const boosted = scoresOf({ scenario: 'pdp-boosted', itemId: 's' });
      expect(rankIds(tenant, { scenario: 'pdp-boosted', itemId: 's' })).toEqual([
        'a',
        'c',
        'b',
        'd',
        'e',
        'f',
      ]);
      expect([boosted.a, boosted.b, boosted.c]).toEqual([0.5 * 3 * 4, 0.25, 0.125 * 4]);
      const liftedBoosted = scoresOf({ scenario: 'pdp-boosted', itemId: 's', country: 'DE' });
      expect(liftedBoosted.a).toBeCloseTo(scoresOf({ ...pdp, country: 'DE' }).a * 12, 12);
    },
  ],
  [
    '7 Constraints',
    'Applied in order: diversity (maxPerCategory, at most N per category); freshness (items newer than freshnessBoostDays get score x 1.5, date from the tenant freshness config or createdAt); long-tail injection (injectLongTail with longTailPercentage reserves about that percent of slots for low-interaction items); then re-sort by score and truncate.',
    () => {
      // One per category (a, c, e), then c (2 days old) × 1.5.
      const diverse = rank(tenant, { scenario: 'pdp-diverse', itemId: 's' });
      expect(Array.from(diverse.ids, (id) => tenant.catalog.externalIds[id])).toEqual(['a', 'c', 'e']);
      expect(diverse.scores![1]).toBe(0.125 * 1.5);
      // 50% of 2 slots: f (no events, below the median) takes b's place.
      expect(rankIds(tenant, { scenario: 'pdp-tail', itemId: 's', count: 2 })).toEqual(['a', 'f']);
    },
  ],
  [
    '8 Segments',
    'Results are balanced across segments of the linked segmentation (itemsPerSegment per segment).',
    () => {
      expect(rankIds(tenant, { scenario: 'pdp-segments', itemId: 's' })).toEqual(['a', 'c', 'e']);
    },
  ],
  [
    '9 Purchase cap',
    'Only when userId is supplied: distinct items the user purchased in the last 90 days may occupy at most purchasedItemsMaxPercent (default 10) percent of the list, with a minimum of 1 slot when the percent is above 0 and the list is non-empty. Without userId the cap is skipped.',
    () => {
      expect(rankIds(tenant, { ...pdp, userId: 'buyer' })).toEqual(['a', 'c', 'd', 'e', 'f']);
      expect(rankIds(tenant, pdp)).toEqual(BASE);
    },
  ],
  [
    '10 Min/max',
    'The list is capped by maxItems and by the requested count; when shorter than minItems, auto-relax applies.',
    () => {
      expect(rankIds(tenant, { ...pdp, count: 2 })).toEqual(['a', 'b']);
      expect(rankIds(tenant, { scenario: 'pdp-short', itemId: 's', count: 5 })).toEqual(['a', 'b', 'c']);
      // maxPerCategory 1 leaves a, c, e (< minItems 4): round 1 allows two per category.
      expect(rankIds(tenant, { scenario: 'pdp-min', itemId: 's' })).toEqual(BASE);
    },
  ],
];

describe('SPEC "Recommendation pipeline" table', () => {
  it.each(PIPELINE)('stage %s', (_name, quote, check) => {
    expect(quote.length).toBeGreaterThan(0);
    check();
  });
});

/** The answer's JSON body, parsed. */
interface Answer {
  items: ({ itemId: string; score?: number } & Record<string, unknown>)[];
  count: number;
  algorithm: string;
  scenario?: string;
  recommId: string;
}

function answer(
  recommender: Recommender,
  tenant: TenantState,
  recommendation: RecommendationRequest,
  at: number,
): Answer {
  return JSON.parse(answerNow(recommender, tenant, recommendation, at)) as Answer;
}

const UNIFIED_REQUEST: Row[] = [
  [
    'scenario',
    'Scenario slug; resolves logicType, filter, boosters, constraints.',
    () => {
      const response = answer(
        new Recommender(new LocalRanker()),
        tenant,
        request({ scenario: 'pdp-filtered', itemId: 's' }),
        NOW,
      );
      expect(response.scenario).toBe('pdp-filtered');
      expect(response.items.map((entry) => entry.itemId)).toEqual(['a', 'c']);
      expect(apiErrorOf(() => rank(tenant, { scenario: 'nope', itemId: 's' })).statusCode).toBe(404);
    },
  ],
  [
    'logicType',
    'Required when no scenario is given.',
    () => {
      expect(apiErrorOf(() => rank(tenant, { itemId: 's' })).code).toBe('MISSING_SEED');
      const response = answer(
        new Recommender(new LocalRanker()),
        tenant,
        request({ logicType: 'item-to-item', itemId: 's' }),
        NOW,
      );
      expect(response.algorithm).toBe('co-occurrence');
      expect(response).not.toHaveProperty('scenario');
    },
  ],
  [
    'userId',
    'Required for user-to-item and recently-viewed. A session id is accepted. Enables the purchase cap on item-based logic.',
    () => {
      expect(apiErrorOf(() => rank(tenant, { logicType: 'user-to-item' })).code).toBe('MISSING_SEED');
      expect(apiErrorOf(() => rank(tenant, { scenario: 'history' })).code).toBe('MISSING_SEED');
      expect(rankIds(tenant, { logicType: 'recently-viewed', userId: 'sess_9' })).toEqual(['e']);
      expect(rankIds(tenant, { logicType: 'items-to-items', itemIds: ['s'], userId: 'buyer' })).toEqual([
        'a',
        'c',
        'd',
        'e',
        'f',
      ]);
    },
  ],
  [
    'itemId',
    'Required for item-to-item and similar-products.',
    () => {
      expect(apiErrorOf(() => rank(tenant, { logicType: 'item-to-item' })).code).toBe('MISSING_SEED');
      expect(apiErrorOf(() => rank(tenant, { logicType: 'similar-products', userId: 'u' })).code).toBe(
        'MISSING_SEED',
      );
      expect(apiErrorOf(() => rank(tenant, { logicType: 'similar-products', itemId: 'zz' })).code).toBe(
        'ITEM_NOT_FOUND',
      );
    },
  ],
  [
    'itemIds',
    'Required for items-to-items.',
    () => {
      expect(apiErrorOf(() => rank(tenant, { logicType: 'items-to-items' })).code).toBe('MISSING_SEED');
      expect(rankIds(tenant, { logicType: 'items-to-items', itemIds: ['zz', 's'] })).toEqual(BASE);
      expect(apiErrorOf(() => rank(tenant, { logicType: 'items-to-items', itemIds: ['zz'] })).code).toBe(
        'ITEM_NOT_FOUND',
      );
    },
  ],
  [
    'count',
    'Default 10. Capped by the scenario maxItems.',
    () => {
      const wide = buildTenant({
        items: Array.from({ length: 15 }, (_, n) => `i${n}`),
        scenarios: [{ slug: 'five', logicType: 'item-to-item', maxItems: 5 }],
      });
      expect(rank(wide, { logicType: 'item-to-item', itemId: 'i0' }).ids.length).toBe(10);
      expect(rank(wide, { scenario: 'five', itemId: 'i0', count: 12 }).ids.length).toBe(5);
      const response = answer(
        new Recommender(new LocalRanker()),
        wide,
        request({ logicType: 'item-to-item', itemId: 'i0' }),
        NOW,
      );
      expect(response.count).toBe(response.items.length);
    },
  ],
  [
    'country',
    'ISO 3166-1 alpha-2. Missing, invalid or OTH ranks globally. Accepted but ignored for rank and cache by recently-viewed.',
    () => {
      expect(scoresOf({ ...pdp, country: 'de' })).toEqual(scoresOf({ ...pdp, country: 'DE' }));
      expect(scoresOf({ ...pdp, country: 'DE' })).not.toEqual(scoresOf(pdp));
      for (const country of ['OTH', 'XX', 'deu'])
        expect(scoresOf({ ...pdp, country })).toEqual(scoresOf(pdp));
      const cache = new ResultCache({ maxBytes: 1 << 20, ttlMs: 60_000 });
      const keyOf = (body: RequestBody) => cache.key(tenant, request(body), 'full').split('\u0000');
      expect(keyOf({ ...pdp, country: 'de' })).toContain('DE');
      expect(keyOf({ ...pdp, country: 'OTH' })).toContain('_global_');
      expect(keyOf({ scenario: 'history', userId: 'u', country: 'DE' })).toEqual(
        keyOf({ scenario: 'history', userId: 'u' }),
      );
      expect(rankIds(tenant, { scenario: 'history', userId: 'u', country: 'DE' })).toEqual(['c', 'a']);
    },
  ],
  [
    'returnProperties',
    'Default true. false returns identity-only items.',
    () => {
      const recommender = new Recommender(new LocalRanker());
      const lean = answer(recommender, tenant, request({ ...pdp, count: 1, returnProperties: false }), NOW);
      expect(lean.items).toEqual([{ itemId: 'a', score: 0.5 }]);
      const recent = answer(
        recommender,
        tenant,
        request({
          scenario: 'history',
          userId: 'u',
          returnProperties: false,
          includedProperties: ['category'],
        }),
        NOW,
      );
      expect(recent.items).toEqual([{ itemId: 'c' }, { itemId: 'a' }]);
      const full = answer(recommender, tenant, request({ ...pdp, count: 1 }), NOW);
      expect(full.items[0]).toMatchObject({
        itemId: 'a',
        score: 0.5,
        externalId: 'a',
        category: 'shoes',
        attributes: { name: 'Alpha', price: 20, brand: 'acme', color: 'red' },
        available: true,
      });
    },
  ],
  [
    'includedProperties',
    'Exact raw document paths; used when returnProperties is true.',
    () => {
      const recommender = new Recommender(new LocalRanker());
      const body: RequestBody = {
        ...pdp,
        count: 2,
        includedProperties: ['attributes.name', 'name', 'category'],
      };
      expect(answer(recommender, tenant, request(body), NOW).items).toEqual([
        { itemId: 'a', score: 0.5, attributes: { name: 'Alpha' }, category: 'shoes' },
        { itemId: 'b', score: 0.25, attributes: { name: 'Beta' }, category: 'shoes' },
      ]);
      const error = apiErrorOf(() =>
        answer(recommender, tenant, request({ ...pdp, includedProperties: ['attributes.constructor'] }), NOW),
      );
      expect([error.code, error.statusCode]).toEqual(['UNSAFE_PATH', 400]);
    },
  ],
  [
    'noCache',
    'Default false. Skip cache read and write.',
    () => {
      // c (2 days old) is fresh for pdp-diverse (7 days) at NOW, not 6 days later: the score of c tells
      // which clock the list was ranked at. The cache key does not carry the clock.
      const own = shop(); // moving the clock forward advances the tenant's windows
      const recommender = new Recommender(new LocalRanker());
      const later = NOW + 6 * DAY;
      const scoreOfC = (body: RequestBody, at: number) =>
        answer(recommender, own, request(body), at).items.find((entry) => entry.itemId === 'c')?.score;
      const diverse: RequestBody = { scenario: 'pdp-diverse', itemId: 's', returnProperties: false };
      expect(scoreOfC({ ...diverse, noCache: true }, NOW)).toBe(0.125 * 1.5);
      expect(scoreOfC(diverse, later)).toBe(0.125); // the noCache request wrote nothing
      expect(scoreOfC(diverse, NOW)).toBe(0.125); // served from the cache
      expect(scoreOfC({ ...diverse, noCache: true }, NOW)).toBe(0.125 * 1.5); // the cache was not read
    },
  ],
  [
    'filter',
    'omit keeps scenario. A value replaces the scenario filter; null or empty string clears it.',
    () => {
      const filtered: RequestBody = { scenario: 'pdp-filtered', itemId: 's' };
      expect(rankIds(tenant, filtered)).toEqual(['a', 'c']);
      expect(rankIds(tenant, { ...filtered, filter: `'price' > 100` })).toEqual([]);
      expect(rankIds(tenant, { ...filtered, filter: `'price' < 25` })).toEqual(['a']);
      expect(rankIds(tenant, { ...filtered, filter: null })).toEqual(['a', 'c']);
      expect(rankIds(tenant, { ...filtered, filter: '', rulesSlugs: null })).toEqual(BASE);
      expect(rankIds(tenant, { ...pdp, filter: `'price' < 25` })).toEqual(['a', 'e', 'f']);
    },
  ],
  [
    'boosters',
    'omit keeps scenario. A value replaces the list; null or [] clears it.',
    () => {
      const boosted: RequestBody = { scenario: 'pdp-boosted', itemId: 's' };
      expect(scoresOf({ ...boosted, boosters: [`boost by 10 where 'brand' = "zeta"`] }).b).toBe(2.5);
      expect(scoresOf({ ...boosted, boosters: null }).c).toBe(0.125);
      expect(scoresOf({ ...boosted, boosters: [] }).a).toBe(1.5);
      expect(scoresOf(boosted).a).toBe(6);
    },
  ],
  [
    'rulesSlugs',
    'omit keeps scenario. Replaces linked rules for this request (unknown slugs are ignored).',
    () => {
      const filtered: RequestBody = { scenario: 'pdp-filtered', itemId: 's' };
      expect(rankIds(tenant, { ...filtered, rulesSlugs: ['cheap', 'unknown'] })).toEqual([
        'a',
        'b',
        'c',
        'e',
        'f',
      ]);
      expect(rankIds(tenant, { ...filtered, rulesSlugs: ['unknown'] })).toEqual(['a', 'b', 'c', 'e', 'f']);
      expect(rankIds(tenant, { ...pdp, rulesSlugs: ['acme-only'] })).toEqual(['a', 'c']);
    },
  ],
  [
    'segmentationId',
    'omit keeps scenario. Replaces the segmentation for balancing.',
    () => {
      const segmented: RequestBody = { scenario: 'pdp-segments', itemId: 's' };
      // by brand: acme (a, c), zeta (b, d), none (e, f) last.
      expect(rankIds(tenant, { ...segmented, segmentationId: 'by-brand' })).toEqual(['a', 'b', 'e']);
      expect(rankIds(tenant, { ...segmented, segmentationId: null })).toEqual(BASE);
      // With the default autoExpandSegments, the cap grows to 2 to fill the count.
      expect(rankIds(tenant, { ...pdp, segmentationId: 'by-category', itemsPerSegment: 1 })).toEqual([
        'a',
        'c',
        'e',
        'b',
        'd',
        'f',
      ]);
    },
  ],
  [
    'itemsPerSegment',
    'omit keeps scenario. Companion to segmentation (null means 1).',
    () => {
      const segmented: RequestBody = { scenario: 'pdp-segments', itemId: 's' };
      expect(rankIds(tenant, { ...segmented, itemsPerSegment: 2 })).toEqual(['a', 'c', 'e', 'b', 'd', 'f']);
      expect(rankIds(tenant, { ...segmented, itemsPerSegment: null })).toEqual(['a', 'c', 'e']);
    },
  ],
  [
    'autoRelaxFilters',
    'omit keeps scenario. false disables.',
    () => {
      const relaxing: RequestBody = { scenario: 'pdp-relax', itemId: 's' };
      expect(rankIds(tenant, relaxing)).toEqual(['a', 'b', 'c', 'e', 'f']);
      expect(rank(tenant, relaxing).filterRelaxation?.droppedClauses).toEqual([`'brand' = "nobody"`]);
      expect(rankIds(tenant, { ...relaxing, autoRelaxFilters: false })).toEqual([]);
      expect(
        rank(tenant, { ...pdp, filter: `'price' < 1000 and 'price' > 1000`, autoRelaxFilters: true })
          .filterRelaxation,
      ).toEqual({
        droppedClauses: [`'price' > 1000`],
        effectiveFilter: `'price' < 1000`,
        droppedEntireFilter: false,
        originalFilter: `'price' < 1000 and 'price' > 1000`,
      });
    },
  ],
  [
    'relaxEntireFilterOnEmpty',
    'omit keeps scenario.',
    () => {
      const nothing: RequestBody = { ...pdp, filter: `'price' > 1000` };
      expect(rankIds(tenant, nothing)).toEqual([]);
      const relaxed = rank(tenant, { ...nothing, relaxEntireFilterOnEmpty: true });
      expect(relaxed.filterRelaxation).toEqual({
        droppedClauses: [`'price' > 1000`],
        effectiveFilter: null,
        droppedEntireFilter: true,
        originalFilter: `'price' > 1000`,
      });
      expect(rankIds(tenant, { ...nothing, relaxEntireFilterOnEmpty: true })).toEqual(BASE);
    },
  ],
];

describe('SPEC "Unified recommendations" request table', () => {
  it.each(UNIFIED_REQUEST)('%s', (_field, quote, check) => {
    expect(quote.length).toBeGreaterThan(0);
    check();
  });

  it('covers every field of the table', () => {
    expect(UNIFIED_REQUEST.map(([field]) => field)).toEqual([
      'scenario',
      'logicType',
      'userId',
      'itemId',
      'itemIds',
      'count',
      'country',
      'returnProperties',
      'includedProperties',
      'noCache',
      'filter',
      'boosters',
      'rulesSlugs',
      'segmentationId',
      'itemsPerSegment',
      'autoRelaxFilters',
      'relaxEntireFilterOnEmpty',
    ]);
  });
});

describe('SPEC "Caching"', () => {
  it('a request with an override is never answered from the cache entry of the plain request', () => {
    const recommender = new Recommender(new LocalRanker());
    const ids = (body: RequestBody) =>
      answer(recommender, tenant, request(body), NOW).items.map((i) => i.itemId);
    expect(ids(pdp)).toEqual(BASE);
    expect(ids({ ...pdp, filter: `'price' < 25` })).toEqual(['a', 'e', 'f']);
    const scoreOfA = (body: RequestBody) => answer(recommender, tenant, request(body), NOW).items[0].score;
    expect(scoreOfA({ ...pdp, country: 'DE' })).not.toBe(scoreOfA(pdp));
  });
});
