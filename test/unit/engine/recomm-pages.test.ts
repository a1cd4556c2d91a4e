import { describe, expect, it } from 'vitest';
import { LocalRanker } from '../../../src/engine/ranker.js';
import { RecommPages, type Page } from '../../../src/engine/recomm-pages.js';
import { newRecommId } from '../../../src/engine/recomm-id.js';
import { Recommender } from '../../../src/engine/recommender.js';
import type { RecommendationRequest } from '../../../src/engine/request.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { NOW, answerNow, apiErrorOf, buildTenant, rankIds, request } from '../../support/tenant-fixture.js';

const CACHE = { maxBytes: 1024 * 1024, ttlMs: 60_000 };
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];

type Parsed = { items: { itemId: string }[]; count: number; recommId: string };

function shop(tenantId = 'shop'): TenantState {
  return buildTenant({
    tenantId,
    items: ITEMS,
    // Popularity falls from a to g.
    events: ITEMS.map((item, i) => ({ item, times: ITEMS.length - i })),
  });
}

/** The next page, answered synchronously (LocalRanker without a queue). */
function nextNow(
  recommender: Recommender,
  tenant: TenantState,
  recommId: string,
  count: number,
  exclude?: string[],
): Parsed {
  let answer: string | Error | undefined;
  recommender.next(tenant, recommId, count, (outcome) => (answer = outcome), exclude, NOW);
  if (answer === undefined || answer instanceof Error) throw answer ?? new Error('no answer');
  return JSON.parse(answer) as Parsed;
}

const ids = (answer: Parsed) => answer.items.map((item) => item.itemId);

describe('the exclude list of a request', () => {
  it('drops the items it names in the availability stage, wherever they would rank', () => {
    const tenant = shop();
    expect(rankIds(tenant, { logicType: 'user-to-item', userId: 'x', count: 4 })).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    const recommendation: RecommendationRequest = Object.assign(
      request({ logicType: 'user-to-item', userId: 'x', count: 4 }),
      { exclude: ['a', 'c', 'unknown'] },
    );
    const recommender = new Recommender(new LocalRanker(), CACHE);
    const answer = JSON.parse(answerNow(recommender, tenant, recommendation)) as Parsed;
    expect(ids(answer)).toEqual(['b', 'd', 'e', 'f']);
  });

  it('bypasses the answer cache: neither read nor written', () => {
    const tenant = shop();
    const recommender = new Recommender(new LocalRanker(), CACHE);
    const plain = request({ logicType: 'user-to-item', userId: 'x', count: 2 });
    answerNow(recommender, tenant, plain);
    const excluding = Object.assign({}, plain, { exclude: ['a'] });
    const answer = JSON.parse(answerNow(recommender, tenant, excluding)) as Parsed;
    expect(ids(answer)).toEqual(['b', 'c']);
    expect(recommender.cacheStats()).toEqual({ hits: 0, misses: 1 });
    // The plain request's cached answer was not replaced by the excluding one's.
    expect(ids(JSON.parse(answerNow(recommender, tenant, plain)) as Parsed)).toEqual(['a', 'b']);
    expect(recommender.cacheStats()).toEqual({ hits: 1, misses: 1 });
  });
});

describe('Recommender.next', () => {
  it('pages a chain without repeats until the ranking is exhausted', () => {
    const tenant = shop();
    const recommender = new Recommender(new LocalRanker(), CACHE, undefined, new RecommPages());
    const first = JSON.parse(
      answerNow(recommender, tenant, request({ logicType: 'user-to-item', userId: 'x', count: 2 })),
    ) as Parsed;
    const second = nextNow(recommender, tenant, first.recommId, 3);
    const third = nextNow(recommender, tenant, second.recommId, 3);
    const fourth = nextNow(recommender, tenant, third.recommId, 3);
    expect([ids(first), ids(second), ids(third), ids(fourth)]).toEqual([
      ['a', 'b'],
      ['c', 'd', 'e'],
      ['f', 'g'],
      [],
    ]);
    // An earlier answer of the chain pages from where it stood.
    expect(ids(nextNow(recommender, tenant, first.recommId, 1))).toEqual(['c']);
    // A page's own exclusions (a batch's) are skipped too, for that page.
    expect(ids(nextNow(recommender, tenant, first.recommId, 2, ['c']))).toEqual(['d', 'e']);
  });

  it("throws RECOMM_NOT_FOUND for an unknown recommId, another tenant's, or without a store", () => {
    const tenant = shop();
    const pages = new RecommPages();
    const recommender = new Recommender(new LocalRanker(), CACHE, undefined, pages);
    const first = JSON.parse(
      answerNow(recommender, tenant, request({ logicType: 'user-to-item', userId: 'x', count: 2 })),
    ) as Parsed;
    const notFound = (run: () => unknown) => expect(apiErrorOf(run).code).toBe('RECOMM_NOT_FOUND');
    notFound(() => nextNow(recommender, tenant, 'nope', 2));
    notFound(() => nextNow(recommender, shop('other'), first.recommId, 2));
    notFound(() => nextNow(new Recommender(new LocalRanker(), CACHE), tenant, first.recommId, 2));
    // The user's deletion forgets them.
    recommender.forget('shop', ['x']);
    notFound(() => nextNow(recommender, tenant, first.recommId, 2));
  });
});

describe('RecommPages', () => {
  const recommendation = request({ logicType: 'user-to-item', userId: 'x' });
  const pageOf = (shown: number[], from = recommendation): Page => ({ request: from, excluded: [], shown });
  const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

  it('gives back the request as the route read it, with its arrays, and the items by dense id', () => {
    const full: RecommendationRequest = Object.assign(
      request({
        scenario: 'home',
        userId: 'ü-user',
        itemIds: ['a', 'b'],
        count: 7,
        country: 'DE',
        filter: null,
        boosters: ['boost by 2 where \'brand\' = "Ünï"'],
        includedProperties: ['attributes.name'],
        rotationRate: 0.5,
        rotationTime: 60,
      }),
      {
        search: {
          query: 'red shoes',
          semanticText: 'shoes',
          filter: '\'color\' = "red"',
          vector: new Float32Array([0.5, -1.25]),
        },
        rotated: { ids: new Int32Array([4, 9]), factors: new Float64Array([0.5, 0.25]) },
        userContext: null,
        exclude: ['ignored'],
      },
    );
    const pages = new RecommPages();
    const recommId = newRecommId('popularity');
    pages.remember('shop', recommId, { request: full, excluded: [3], shown: [5, 1, 2] });
    const page = pages.get('shop', recommId)!;
    expect(Array.from(page.shown)).toEqual([5, 1, 2]);
    expect(Array.from(page.excluded)).toEqual([3]);
    expect(page.request).toEqual(Object.assign({}, full, { exclude: undefined }));
    expect('exclude' in page.request).toBe(false);
    // `null` (no user document, no filter) stays apart from a field left out.
    expect(page.request.userContext).toBeNull();
    expect(page.request.overrides.filter).toBeNull();
    expect('itemId' in page.request).toBe(false);
    // Without arrays, none is made up.
    const bare = newRecommId('popularity');
    pages.remember('shop', bare, pageOf([]));
    expect(pages.get('shop', bare)!.request).toEqual(plain(recommendation));
    expect(pages.get('shop', bare)!.request.rotated).toBeUndefined();
  });

  it('finds a page only under its tenant and its recommId as given', () => {
    const pages = new RecommPages();
    const recommId = newRecommId('cooccurrence');
    pages.remember('shop', recommId, pageOf([1]));
    expect(pages.get('other', recommId)).toBeUndefined();
    expect(pages.get('shop', recommId.toUpperCase())).toBeUndefined();
    expect(pages.get('shop', `${recommId.slice(0, -1)}x`)).toBeUndefined();
    expect(pages.get('shop', 'nope')).toBeUndefined();
    // A text that is no recommId of engine/recomm-id.ts is not kept.
    pages.remember('shop', 'r1', pageOf([1]));
    expect(pages.get('shop', 'r1')).toBeUndefined();
    expect(pages.size).toBe(1);
  });

  it('forgets a page 30 minutes after its answer, however often it is read, and then frees its memory', () => {
    let clock = 1000;
    const pages = new RecommPages({ maxBytes: 1024 * 1024, ttlMs: 30 * 60_000, now: () => clock });
    const first = newRecommId('popularity');
    pages.remember('shop', first, pageOf([1]));
    expect(pages.bytes).toBeGreaterThan(0);
    clock += 29 * 60_000;
    expect(Array.from(pages.get('shop', first)!.shown)).toEqual([1]);
    clock += 60_000 + 1;
    expect(pages.get('shop', first)).toBeUndefined();
    const second = newRecommId('popularity');
    pages.remember('shop', second, pageOf([2]));
    pages.purgeStale();
    // The first went, the second is young.
    expect(pages.size).toBe(1);
    clock += 31 * 60_000;
    pages.purgeStale();
    expect(pages.size).toBe(0);
    expect(pages.bytes).toBe(0);
    // And it takes pages again.
    const third = newRecommId('popularity');
    pages.remember('shop', third, pageOf([3]));
    expect(Array.from(pages.get('shop', third)!.shown)).toEqual([3]);
  });

  it('takes no more than its bound, the least recently stored going first', () => {
    const maxBytes = 64 * 1024;
    const pages = new RecommPages({ maxBytes, ttlMs: 60_000 });
    const shown = Array.from({ length: 20 }, (_, i) => i);
    const recommIds = Array.from({ length: 5000 }, () => newRecommId('popularity'));
    for (const recommId of recommIds) pages.remember('shop', recommId, pageOf(shown));
    expect(pages.bytes).toBeLessThanOrEqual(maxBytes);
    // A page of 20 items of this request takes 160 bytes (64 of header, 80 of items, its own JSON); the
    // arena is what the bound leaves beside its index (a tenth) and the requests' shapes (a sixteenth).
    expect(pages.size).toBeGreaterThan(250);
    expect(pages.size).toBeLessThan(maxBytes / 160);
    const kept = recommIds.filter((recommId) => pages.get('shop', recommId) !== undefined);
    expect(kept).toEqual(recommIds.slice(-pages.size));
    expect(Array.from(pages.get('shop', recommIds.at(-1)!)!.shown)).toEqual(shown);
  });

  it('keeps the newest pages whole whatever their sizes, and drops the oldest', () => {
    const pages = new RecommPages({ maxBytes: 16 * 1024, ttlMs: 60_000 });
    // Deterministic sizes from 0 to 60 items.
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0);
    const stored: { recommId: string; shown: number[] }[] = [];
    for (let i = 0; i < 3000; i++) {
      const shown = Array.from({ length: next() % 61 }, () => next() % 100_000);
      const recommId = newRecommId('ease');
      pages.remember('shop', recommId, pageOf(shown));
      stored.push({ recommId, shown });
      if (i % 250 !== 249) continue;
      const kept = stored.filter(({ recommId }) => pages.get('shop', recommId) !== undefined);
      expect(kept).toEqual(stored.slice(-pages.size));
      for (const { recommId, shown } of kept)
        expect(Array.from(pages.get('shop', recommId)!.shown)).toEqual(shown);
    }
    // A page over a sixteenth of the bound is not kept.
    const large = newRecommId('ease');
    pages.remember('shop', large, pageOf(Array.from({ length: 300 }, (_, i) => i)));
    expect(pages.get('shop', large)).toBeUndefined();
  });

  it('keeps the shapes many requests share once, and requests of every shape whole', () => {
    const maxBytes = 64 * 1024;
    const pages = new RecommPages({ maxBytes, ttlMs: 60_000 });
    const shared = request({
      logicType: 'item-to-item',
      itemId: 'a',
      count: 10,
      includedProperties: ['x'.repeat(500)],
    });
    const recommIds = Array.from({ length: 50 }, () => newRecommId('cooccurrence'));
    for (const recommId of recommIds) pages.remember('shop', recommId, pageOf([1], shared));
    // 50 pages of 1,000 characters of projection would not fit in 60 KiB beside each other.
    expect(pages.size).toBe(50);
    for (const recommId of recommIds) expect(pages.get('shop', recommId)!.request).toEqual(plain(shared));
    // Shapes past their share of the bound (a sixteenth) stay with their pages.
    const distinct = Array.from({ length: 40 }, (_, i) =>
      request({
        logicType: 'user-to-item',
        userId: 'x',
        filter: `'n' = ${i} and 'long' = "${'y'.repeat(100)}"`,
      }),
    );
    const distinctIds = distinct.map(() => newRecommId('popularity'));
    distinct.forEach((each, i) => pages.remember('shop', distinctIds[i], pageOf([i], each)));
    distinct.forEach((each, i) => expect(pages.get('shop', distinctIds[i])!.request).toEqual(plain(each)));
    expect(pages.bytes).toBeLessThanOrEqual(maxBytes);
  });

  it("counts the rotated items and the user's document a page's request carries against its bound", () => {
    const rotating: RecommendationRequest = Object.assign({}, recommendation, {
      rotated: { ids: new Int32Array(500), factors: new Float64Array(500) },
    });
    const documented: RecommendationRequest = Object.assign({}, recommendation, {
      userContext: { externalId: 'x', attributes: { bio: 'x'.repeat(6_000) }, createdAt: '' },
    });
    // 6,000 bytes each: 256 KiB, the index and the shapes beside the pages included, hold 38 at most.
    for (const carrying of [rotating, documented]) {
      const pages = new RecommPages({ maxBytes: 256 * 1024, ttlMs: 60_000 });
      const recommIds = Array.from({ length: 50 }, () => newRecommId('popularity'));
      for (const recommId of recommIds) pages.remember('shop', recommId, pageOf([1], carrying));
      expect(pages.size).toBeLessThanOrEqual(38);
      expect(pages.size).toBeGreaterThanOrEqual(34);
      expect(plain(pages.get('shop', recommIds.at(-1)!)!.request)).toEqual(plain(carrying));
      expect(pages.get('shop', recommIds[0])).toBeUndefined();
    }
  });

  it("forgets the pages of deleted users' requests, in that tenant only", () => {
    const pages = new RecommPages({ maxBytes: 64 * 1024, ttlMs: 60_000 });
    const of = (userId: string) => request({ logicType: 'user-to-item', userId });
    const stored: [string, string, string][] = [];
    for (let i = 0; i < 100; i++) {
      const tenantId = i % 3 === 0 ? 'other' : 'shop';
      const userId = `user-${i % 7}`;
      const recommId = newRecommId('popularity');
      pages.remember(tenantId, recommId, pageOf([i], of(userId)));
      stored.push([tenantId, userId, recommId]);
    }
    pages.forget('shop', ['user-2', 'user-5', 'nobody']);
    for (const [tenantId, userId, recommId] of stored) {
      const forgotten = tenantId === 'shop' && (userId === 'user-2' || userId === 'user-5');
      expect(pages.get(tenantId, recommId) === undefined).toBe(forgotten);
    }
    const left = stored.filter(
      ([tenantId, userId]) => tenantId === 'other' || !['user-2', 'user-5'].includes(userId),
    );
    expect(pages.size).toBe(left.length);
    // The arena still wraps around the forgotten pages.
    for (let i = 0; i < 1000; i++)
      pages.remember('shop', newRecommId('popularity'), pageOf([i], of('user-2')));
    expect(pages.bytes).toBeLessThanOrEqual(64 * 1024);
  });
});
