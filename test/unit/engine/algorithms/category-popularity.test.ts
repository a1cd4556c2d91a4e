import { describe, expect, it } from 'vitest';
import { categoryCandidates } from '../../../../src/engine/algorithms/category-popularity.js';
import {
  buildTenant,
  contextOf,
  entriesOf,
  item,
  NOW,
  type EventSpec,
} from '../../../support/tenant-fixture.js';

/** Popularity, most viewed first: b1 s1 h1 s2 b2 h2 s3; t1 and t2 (shoes) are never viewed. */
const VIEWS: [string, number][] = [
  ['b1', 9],
  ['s1', 8],
  ['h1', 7],
  ['s2', 6],
  ['b2', 5],
  ['h2', 4],
  ['s3', 3],
];

function shop() {
  const category = (id: string) => ({ s: 'shoes', b: 'bags', h: 'hats', t: 'shoes' })[id[0]] ?? null;
  const ids = ['t1', 't2', ...VIEWS.map(([id]) => id), 'none'];
  const events: EventSpec[] = VIEWS.map(([id, times]) => ({ item: id, times }));
  return buildTenant({
    items: ids.map((id) => item(id, { category: id === 'none' ? null : category(id) })),
    events,
    scenarios: [{ slug: 'pdp', logicType: 'items-to-items' }],
  });
}

function candidatesOf(tenant: ReturnType<typeof shop>, seeds: string[], now = NOW): [string, number][] {
  const context = contextOf(tenant, { scenario: 'pdp', itemIds: seeds }, now);
  return entriesOf(tenant, categoryCandidates(context, context.seeds));
}

describe('category-popularity candidates', () => {
  it("are the seeds' categories' items by popularity, merged across categories, seeds left out", () => {
    const tenant = shop();
    expect(candidatesOf(tenant, ['t1']).map(([id]) => id)).toEqual(['s1', 's2', 's3', 't2']);
    expect(candidatesOf(tenant, ['t1', 'b2']).map(([id]) => id)).toEqual(['b1', 's1', 's2', 's3', 't2']);
    const scores = candidatesOf(tenant, ['t1', 'b2']).map(([, score]) => score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('are none for seeds without a category', () => {
    expect(candidatesOf(shop(), ['none'])).toEqual([]);
  });

  it('leave out an item that moved to another category after popularity was ranked, and take new categories', () => {
    const tenant = shop();
    expect(candidatesOf(tenant, ['t1']).map(([id]) => id)).toEqual(['s1', 's2', 's3', 't2']);
    // Within a second the ranking is reused, so its category lists predate both changes.
    tenant.catalog.upsert(item('s2', { category: 'hats' }));
    tenant.catalog.upsert(item('x1', { category: 'scarves' }));
    tenant.catalog.upsert(item('x2', { category: 'scarves' }));
    expect(candidatesOf(tenant, ['t1'], NOW + 10).map(([id]) => id)).toEqual(['s1', 's3', 't2']);
    expect(candidatesOf(tenant, ['x1'], NOW + 10)).toEqual([]);
    // Once popularity is ranked again, the lists follow the catalog.
    const later = NOW + 5_000;
    expect(candidatesOf(tenant, ['h1'], later).map(([id]) => id)).toEqual(['s2', 'h2']);
    expect(candidatesOf(tenant, ['x1'], later).map(([id]) => id)).toEqual(['x2']);
  });
});
