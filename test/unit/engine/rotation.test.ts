import { describe, expect, it } from 'vitest';
import { LocalRanker } from '../../../src/engine/ranker.js';
import { Recommender } from '../../../src/engine/recommender.js';
import {
  MAX_RETURNS_PER_IDENTITY,
  RotationRecord,
  rotationOf,
  type RotationSettings,
} from '../../../src/engine/rotation.js';
import { recommendList } from '../../../src/engine/pipeline.js';
import type { RotatedItems } from '../../../src/engine/request.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { buildTenant, externalIds, NOW, request, type RequestBody } from '../../support/tenant-fixture.js';

const settings = (rate: number, windowMs = 60_000, identity = 'u1'): RotationSettings => ({
  identity,
  rate,
  windowMs,
});

/** Items i1..i8, i1 the most popular; a scenario with rotation defaults. */
function shop() {
  const items = Array.from({ length: 8 }, (_, i) => `i${i + 1}`);
  return buildTenant({
    items,
    events: items.map((item, i) => ({ item, times: 8 - i })),
    scenarios: [
      { slug: 'rotating', logicType: 'user-to-item', rotationRate: 0.5, rotationTime: 60 },
      { slug: 'pdp', logicType: 'item-to-item', rotationRate: 1 },
    ],
  });
}

/** A tenant whose catalog holds these items. */
const catalogOf = (tenantId: string, items: string[]) => buildTenant({ tenantId, items });

describe('RotationRecord', () => {
  it('gives (1 − rate)^k per item returned k times within the window', () => {
    const record = new RotationRecord();
    const t = catalogOf('t', ['a', 'b', 'c']);
    const other = catalogOf('other', ['a', 'b', 'c']);
    const half = settings(0.5);
    expect(record.rotated(t, half, NOW)).toBeUndefined();
    record.record(t, half, ['a', 'b'], NOW - 30_000);
    record.record(t, half, ['a', 'c', 'not-in-the-catalog'], NOW - 10_000);
    const factorsOf = (rotated: RotatedItems) =>
      Object.fromEntries([...rotated.ids].map((id, i) => [t.catalog.externalIds[id], rotated.factors[i]]));
    expect(factorsOf(record.rotated(t, half, NOW)!)).toEqual({ a: 0.25, b: 0.5, c: 0.5 });
    // Counting leaves nothing behind for the next count.
    expect(factorsOf(record.rotated(t, half, NOW)!)).toEqual({ a: 0.25, b: 0.5, c: 0.5 });
    // A shorter window sees only the later answer; rate 1 gives 0.
    expect(factorsOf(record.rotated(t, settings(1, 20_000), NOW)!)).toEqual({ a: 0, c: 0 });
    // Other identities and tenants are apart.
    expect(record.rotated(t, settings(0.5, 60_000, 'u2'), NOW)).toBeUndefined();
    expect(record.rotated(other, half, NOW)).toBeUndefined();
    record.forget('t', ['u1']);
    expect(record.rotated(t, half, NOW)).toBeUndefined();
  });

  it('keeps the latest returns of an identity, and forgets those older than its longest window', () => {
    const record = new RotationRecord();
    const ids = Array.from({ length: MAX_RETURNS_PER_IDENTITY + 10 }, (_, i) => `x${i}`);
    const t = catalogOf('t', [...ids, 'old', 'new']);
    record.record(t, settings(1), ids, NOW);
    const itemsOf = (rotated: RotatedItems | undefined) =>
      [...(rotated?.ids ?? [])].map((id) => t.catalog.externalIds[id]);
    const rotated = itemsOf(record.rotated(t, settings(1), NOW));
    expect(rotated).toHaveLength(MAX_RETURNS_PER_IDENTITY);
    expect(rotated).not.toContain('x0');
    expect(rotated).toContain(`x${ids.length - 1}`);
    const short = settings(1, 1_000, 'u2');
    record.record(t, short, ['old'], NOW);
    record.record(t, short, ['new'], NOW + 5_000);
    const window = settings(1, 60_000, 'u2');
    expect(itemsOf(record.rotated(t, window, NOW + 5_000))).toEqual(['new']);
  });

  it('stays within its byte bound, the least recently served identities going first', () => {
    const record = new RotationRecord(10_000);
    const t = catalogOf('t', ['item-a', 'item-b', 'item-c']);
    for (let user = 0; user < 100; user++) {
      record.record(t, settings(1, 60_000, `user-${user}`), ['item-a', 'item-b', 'item-c'], NOW);
    }
    expect(record.size).toBeGreaterThan(0);
    expect(record.size).toBeLessThan(100);
    expect(record.rotated(t, settings(1, 60_000, 'user-99'), NOW)).toBeDefined();
    expect(record.rotated(t, settings(1, 60_000, 'user-0'), NOW)).toBeUndefined();
  });

  it('drops an identity once its time to live passed', async () => {
    const record = new RotationRecord();
    record.record(catalogOf('t', ['a']), settings(1, 5), ['a'], Date.now());
    expect(record.size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    record.purgeStale();
    expect(record.size).toBe(0);
  });
});

describe('rotationOf', () => {
  const tenant = shop();
  const of = (body: RequestBody) => rotationOf(tenant, request(body));

  it("is the request's, else its scenario's, for user-to-item with a user and a rate > 0", () => {
    expect(of({ logicType: 'user-to-item', userId: 'u' })).toBeUndefined();
    expect(of({ logicType: 'user-to-item', userId: 'u', rotationRate: 0.3 })).toEqual({
      identity: 'u',
      rate: 0.3,
      windowMs: 7_200_000,
    });
    expect(of({ scenario: 'rotating', userId: 'u' })).toEqual({ identity: 'u', rate: 0.5, windowMs: 60_000 });
    expect(of({ scenario: 'rotating', userId: 'u', rotationRate: 0 })).toBeUndefined();
    expect(of({ scenario: 'rotating', userId: 'u', rotationTime: 2.5 })).toMatchObject({ windowMs: 2_500 });
    // Not user-to-item, no user, an unknown scenario: off.
    expect(of({ scenario: 'pdp', itemId: 'i1', userId: 'u' })).toBeUndefined();
    expect(of({ logicType: 'item-to-item', itemId: 'i1', userId: 'u', rotationRate: 1 })).toBeUndefined();
    expect(of({ scenario: 'rotating' })).toBeUndefined();
    expect(of({ scenario: 'nope', userId: 'u', rotationRate: 1 })).toBeUndefined();
  });
});

/** Rotated items as the record gives them, by dense id. */
function rotatedItems(tenant: TenantState, factors: Record<string, number>): RotatedItems {
  const entries = Object.entries(factors);
  return {
    ids: Int32Array.from(entries, ([itemId]) => tenant.catalog.idOf(itemId)),
    factors: Float64Array.from(entries, ([, factor]) => factor),
  };
}

describe('the rotation stage', () => {
  const tenant = shop();
  const body = { logicType: 'user-to-item', userId: 'cold', count: 4 } as const;

  it('multiplies the scores of rotated items by their factor', () => {
    const plain = recommendList(tenant, request(body), NOW);
    const rotatedRequest = request(body);
    rotatedRequest.rotated = rotatedItems(tenant, { i1: 0.25, i2: 0.5 });
    const rotated = recommendList(tenant, rotatedRequest, NOW);
    const scoreOf = (list: typeof plain, id: string) =>
      list.scores![externalIds(tenant, list.ids).indexOf(id)] ?? Number.NaN;
    expect(externalIds(tenant, plain.ids)).toEqual(['i1', 'i2', 'i3', 'i4']);
    expect(scoreOf(rotated, 'i2')).toBeCloseTo(scoreOf(plain, 'i2') * 0.5, 12);
    const ranked = rotated.scores!;
    expect([...ranked].sort((a, b) => b - a)).toEqual(ranked);
    expect(externalIds(tenant, rotated.ids)).not.toContain('i1');
  });

  it('puts items with factor 0 after every other candidate, and lists them when nothing else is left', () => {
    const hiding = request({ ...body, count: 8 });
    hiding.rotated = rotatedItems(tenant, { i1: 0, i3: 0 });
    const list = recommendList(tenant, hiding, NOW);
    expect(externalIds(tenant, list.ids)).toEqual(['i2', 'i4', 'i5', 'i6', 'i7', 'i8', 'i1', 'i3']);
    expect(list.scores!.slice(-2)).toEqual([0, 0]);
  });
});

describe('Recommender with rotation', () => {
  it('ranks every rotation request anew and records what it answered', () => {
    const tenant = shop();
    const recommender = new Recommender(new LocalRanker(), { maxBytes: 1024 * 1024, ttlMs: 60_000 });
    const answers: string[][] = [];
    const ask = (extra: RequestBody = {}) =>
      recommender.recommend(
        tenant,
        request({ logicType: 'user-to-item', userId: 'cold', count: 3, ...extra }),
        (answer) => {
          if (answer instanceof Error) throw answer;
          answers.push(
            (JSON.parse(answer) as { items: { itemId: string }[] }).items.map((item) => item.itemId),
          );
        },
        NOW,
      );
    ask();
    ask({ rotationRate: 1 });
    ask({ rotationRate: 1 });
    ask();
    ask({ rotationRate: 1 });
    expect(answers).toEqual([
      ['i1', 'i2', 'i3'],
      ['i1', 'i2', 'i3'],
      ['i4', 'i5', 'i6'],
      ['i1', 'i2', 'i3'],
      ['i7', 'i8', 'i1'],
    ]);
    // Only the plain request hit the cache.
    expect(recommender.cacheStats()).toEqual({ hits: 1, misses: 1 });
  });
});
