import { describe, expect, it } from 'vitest';
import { popularityRanking } from '../../../src/engine/popularity.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { Rng } from '../../../fixtures/prng.js';
import { buildTenant, NOW, type EventSpec } from '../../support/tenant-fixture.js';

/** Every item of the catalog by its count plus one, most first, equal counts by lower id; scores by the top. */
function expectRanked(tenant: TenantState): void {
  const { ids, scores } = popularityRanking(tenant, undefined, NOW);
  const countOf = (id: number) => tenant.recentCounts.count(id) + 1;
  const expected = Array.from({ length: tenant.catalog.size }, (_, id) => id)
    .filter((id) => tenant.catalog.inCatalog[id])
    .sort((a, b) => countOf(b) - countOf(a) || a - b);
  expect(Array.from(ids)).toEqual(expected);
  const top = countOf(expected[0]);
  expect(Array.from(scores)).toEqual(expected.map((id) => countOf(id) / top));
}

/** `items` items, most of them with 1 to 6 events (many equal counts), some with none. */
function shop(items: number, seed: number): { items: string[]; events: EventSpec[] } {
  const rng = new Rng(seed, 3);
  const ids = Array.from({ length: items }, (_, i) => `item-${i}`);
  return {
    items: ids,
    events: ids.filter(() => rng.chance(0.7)).map((item) => ({ item, times: 1 + rng.int(6) })),
  };
}

describe('popularity ranking', () => {
  it('orders every catalog item by 30-day count, most first, equal counts by lower id', () => {
    const { items, events } = shop(500, 7);
    // An item that events name but the catalog does not have is not ranked.
    const tenant = buildTenant({ items, events: [...events, { item: 'not-in-catalog', times: 9 }] });
    expect(tenant.catalog.size).toBe(501);
    expectRanked(tenant);
    expect(popularityRanking(tenant, undefined, NOW).ids).toHaveLength(500);
  });

  it('orders them the same when the top count is far above the number of items', () => {
    const { items, events } = shop(60, 11);
    const tenant = buildTenant({ items, events: [...events, { item: 'item-17', times: 400 }] });
    expect(tenant.recentCounts.count(17)).toBeGreaterThan(4 * 60 + 16);
    expectRanked(tenant);
  });
});
