import { describe, expect, it } from 'vitest';
import { LocalRanker } from '../../../src/engine/ranker.js';
import { RecommPages } from '../../../src/engine/recomm-pages.js';
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

  it('forgets a page 30 minutes after its answer, however often it is read', () => {
    // (lru-cache takes a time of 0 for "never stored".)
    let clock = 1000;
    const pages = new RecommPages({ maxBytes: 1024 * 1024, ttlMs: 30 * 60_000, now: () => clock });
    pages.remember('shop', 'r1', recommendation, ['a']);
    clock += 29 * 60_000;
    expect(pages.get('shop', 'r1')?.shown).toEqual(['a']);
    clock += 60_000 + 1;
    expect(pages.get('shop', 'r1')).toBeUndefined();
    pages.remember('shop', 'r2', recommendation, ['b']);
    clock += 31 * 60_000;
    pages.purgeStale();
    expect(pages.size).toBe(0);
  });

  it('keeps within its byte bound, the least recently stored going first', () => {
    const pages = new RecommPages({ maxBytes: 64 * 1024, ttlMs: 60_000 });
    const items = Array.from({ length: 20 }, (_, i) => `item-${i}`);
    for (let i = 0; i < 1000; i++) pages.remember('shop', `r${i}`, recommendation, items);
    expect(pages.size).toBeGreaterThan(10);
    expect(pages.size).toBeLessThan(200);
    expect(pages.get('shop', 'r0')).toBeUndefined();
    expect(pages.get('shop', 'r999')?.shown).toEqual(items);
  });

  it("counts the rotated items and the user's document a page's request carries against its bound", () => {
    const rotating: RecommendationRequest = Object.assign({}, recommendation, {
      rotated: { ids: new Int32Array(2000), factors: new Float64Array(2000) },
    });
    const documented: RecommendationRequest = Object.assign({}, recommendation, {
      userContext: { externalId: 'x', attributes: { bio: 'x'.repeat(10_000) }, createdAt: '' },
    });
    // 24,000 bytes of arrays, 20,000 of text: two pages of either fill 64 KiB.
    for (const carrying of [rotating, documented]) {
      const pages = new RecommPages({ maxBytes: 64 * 1024, ttlMs: 60_000 });
      for (let i = 0; i < 10; i++) pages.remember('shop', `r${i}`, carrying, ['a']);
      expect(pages.size).toBeLessThanOrEqual(3);
      expect(pages.get('shop', 'r9')?.request).toBe(carrying);
    }
  });

  it("keeps a chain's items: the pages before, then its own", () => {
    const pages = new RecommPages();
    pages.remember('shop', 'r2', recommendation, ['c'], ['a', 'b']);
    expect(pages.get('shop', 'r2')?.shown).toEqual(['a', 'b', 'c']);
    expect(pages.get('other', 'r2')).toBeUndefined();
  });
});
