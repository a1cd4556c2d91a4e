import { describe, expect, it } from 'vitest';
import { constraints, constraintsForRound } from '../../../../src/engine/stages/constraints.js';
import { longTailThreshold } from '../../../../src/engine/long-tail.js';
import {
  buildTenant,
  contextOf,
  daysAgo,
  entriesOf,
  item,
  NOW,
  poolOf,
  rank,
  rankIds,
  type TenantSpec,
} from '../../../support/tenant-fixture.js';
import type { TenantState } from '../../../../src/state/tenant-state.js';

/** Runs stage 7 (round 0) on a crafted pool under a scenario with these constraints. */
function constrain(
  tenant: TenantState,
  scenario: string,
  entries: [string, number][],
  count?: number,
): [string, number][] {
  const context = contextOf(tenant, { scenario, itemId: 'seed', count });
  return entriesOf(tenant, constraints(poolOf(tenant, entries), context, 0));
}

function tenantWith(spec: TenantSpec, scenarios: Record<string, object>): TenantState {
  return buildTenant({
    ...spec,
    items: ['seed', ...(spec.items ?? [])],
    scenarios: Object.entries(scenarios).map(([slug, constraints]) => ({
      slug,
      logicType: 'item-to-item',
      constraints,
    })),
  });
}

describe('stage 7, diversity (maxPerCategory)', () => {
  const tenant = tenantWith(
    {
      items: [
        item('a1', { category: 'A' }),
        item('a2', { category: 'A' }),
        item('a3', { category: 'A' }),
        item('b1', { category: 'B' }),
        'n1',
        'n2',
      ],
      neighbours: [
        ['seed', 'a1', 0.8],
        ['seed', 'a2', 0.7],
        ['seed', 'a3', 0.6],
        ['seed', 'b1', 0.5],
        ['seed', 'n1', 0.4],
        ['seed', 'n2', 0.3],
      ],
    },
    { two: { maxPerCategory: 2 }, one: { maxPerCategory: 1 } },
  );

  it('keeps at most N per category, best first; items without a category are not capped', () => {
    expect(
      constrain(tenant, 'two', [
        ['n2', 0.3],
        ['a3', 0.6],
        ['b1', 0.5],
        ['a1', 0.8],
        ['n1', 0.4],
        ['a2', 0.7],
      ]),
    ).toEqual([
      ['a1', 0.8],
      ['a2', 0.7],
      ['b1', 0.5],
      ['n1', 0.4],
      ['n2', 0.3],
    ]);
  });

  it('applies to the ranked list', () => {
    expect(rankIds(tenant, { scenario: 'one', itemId: 'seed' })).toEqual(['a1', 'b1', 'n1', 'n2']);
    expect(rankIds(tenant, { logicType: 'item-to-item', itemId: 'seed' })).toEqual([
      'a1',
      'a2',
      'a3',
      'b1',
      'n1',
      'n2',
    ]);
  });
});

describe('stage 7, freshness', () => {
  const entries: [string, number][] = [
    ['old', 0.8],
    ['fresh', 0.6],
    ['undated', 0.5],
  ];

  it('items created inside freshnessBoostDays get score × 1.5 (createdAt fallback)', () => {
    const tenant = tenantWith(
      {
        items: [
          item('old', { createdAt: daysAgo(30) }),
          item('fresh', { createdAt: daysAgo(2) }),
          item('undated', { createdAt: daysAgo(8) }),
        ],
      },
      { week: { freshnessBoostDays: 7 } },
    );
    expect(constrain(tenant, 'week', entries)).toEqual([
      ['fresh', 0.6 * 1.5],
      ['old', 0.8],
      ['undated', 0.5],
    ]);
  });

  const published = {
    items: [
      item('old', {
        createdAt: daysAgo(1),
        attributes: { publishedAt: new Date(daysAgo(60)).toISOString() },
      }),
      item('fresh', {
        createdAt: daysAgo(60),
        attributes: { publishedAt: new Date(daysAgo(1)).toISOString() },
      }),
      item('undated', { createdAt: daysAgo(1) }),
    ],
  };

  it("the date comes from the tenant's freshness keyPath when the item has it", () => {
    const tenant = tenantWith(
      { ...published, freshness: { keyPath: 'attributes.publishedAt', fallbackToCreatedAt: false } },
      { week: { freshnessBoostDays: 7 } },
    );
    expect(constrain(tenant, 'week', entries)).toEqual([
      ['fresh', 0.6 * 1.5],
      ['old', 0.8],
      ['undated', 0.5],
    ]);
  });

  it('items without the keyPath fall back to createdAt when fallbackToCreatedAt is true', () => {
    const tenant = tenantWith(
      { ...published, freshness: { keyPath: 'attributes.publishedAt', fallbackToCreatedAt: true } },
      { week: { freshnessBoostDays: 7 } },
    );
    expect(constrain(tenant, 'week', entries)).toEqual([
      ['fresh', 0.6 * 1.5],
      ['old', 0.8],
      ['undated', 0.5 * 1.5],
    ]);
  });
});

describe('stage 7, long-tail injection', () => {
  // 30-day counts: p1-p4 and m 3 each, t1 and t2 none: the median is 3, so only t1 and t2 are long-tail.
  const tenant = tenantWith(
    {
      items: ['p1', 'p2', 'p3', 'p4', 'm', 't1', 't2'],
      events: ['p1', 'p2', 'p3', 'p4', 'm'].map((id) => ({ item: id, times: 3 })),
    },
    {
      quarter: { injectLongTail: true, longTailPercentage: 25 },
      half: { injectLongTail: true, longTailPercentage: 50 },
      off: { injectLongTail: false, longTailPercentage: 50 },
    },
  );
  const pool: [string, number][] = [
    ['p1', 0.9],
    ['p2', 0.8],
    ['p3', 0.7],
    ['p4', 0.6],
    ['m', 0.5],
    ['t1', 0.4],
    ['t2', 0.3],
  ];

  it('long-tail items are those below the median 30-day count (zero-count items included)', () => {
    expect(longTailThreshold(tenant, NOW)).toBe(3);
    const even = buildTenant({
      items: ['w', 'x', 'y', 'z'],
      events: [
        { item: 'x', times: 1 },
        { item: 'y', times: 3 },
        { item: 'z', times: 5 },
      ],
    });
    expect(longTailThreshold(even, NOW)).toBe(2);
    const sparse = buildTenant({ items: ['a', 'b', 'c'], events: [{ item: 'a', times: 5 }] });
    expect(longTailThreshold(sparse, NOW)).toBe(0);
  });

  it('reserves round(count × pct / 100) of the top count slots: the best long-tail item trades places', () => {
    expect(constrain(tenant, 'quarter', pool, 4)).toEqual([
      ['p1', 0.9],
      ['p2', 0.8],
      ['p3', 0.7],
      ['t1', 0.6],
      ['m', 0.5],
      ['p4', 0.4],
      ['t2', 0.3],
    ]);
  });

  it('several promoted items keep their relative order, and so do the demoted ones', () => {
    expect(constrain(tenant, 'half', pool, 4)).toEqual([
      ['p1', 0.9],
      ['p2', 0.8],
      ['t1', 0.7],
      ['t2', 0.6],
      ['m', 0.5],
      ['p3', 0.4],
      ['p4', 0.3],
    ]);
  });

  it('nothing moves when enough long-tail items are already in the top count', () => {
    const inside: [string, number][] = [
      ['p1', 0.9],
      ['t1', 0.8],
      ['p2', 0.7],
      ['p3', 0.6],
      ['t2', 0.5],
    ];
    expect(constrain(tenant, 'quarter', inside, 4)).toEqual(inside);
  });

  it('nothing moves when injectLongTail is off', () => {
    expect(constrain(tenant, 'off', pool, 4)).toEqual(pool);
  });

  it('applies to the ranked list', () => {
    // Without own candidates the fill ranks by popularity: p1-p4 and m, then t1 and t2.
    expect(rankIds(tenant, { scenario: 'quarter', itemId: 'seed', count: 4 })).toEqual([
      'p1',
      'p2',
      'p3',
      't1',
    ]);
  });
});

describe('stage 7, re-sort and truncate', () => {
  it('re-sorts by score and cuts the pool to max(3 × count, 100)', () => {
    const ids = Array.from({ length: 150 }, (_, n) => `i${n}`);
    const tenant = tenantWith({ items: ids }, { plain: {} });
    const entries = ids.map((id, n): [string, number] => [id, (n * 37) % 150]);
    const result = constrain(tenant, 'plain', entries, 10);
    expect(result.length).toBe(100);
    expect(result.map(([, score]) => score)).toEqual(Array.from({ length: 100 }, (_, n) => 149 - n));
    expect(constrain(tenant, 'plain', entries, 40).length).toBe(120);
  });

  it('the ranked list is cut to count only at the end', () => {
    const tenant = tenantWith({ items: ['a', 'b', 'c'] }, { plain: {} });
    expect(rank(tenant, { scenario: 'plain', itemId: 'seed', count: 2 }).ids.length).toBe(2);
  });
});

describe('constraint rounds (auto-relax, CONTRACT "Recommendation details")', () => {
  const configured = {
    maxPerCategory: 3,
    freshnessBoostDays: 5,
    injectLongTail: false,
    longTailPercentage: 20,
  };

  it('round 0 is the configuration as is', () => {
    expect(constraintsForRound(configured, 0)).toEqual(configured);
    expect(constraintsForRound({}, 0)).toEqual({
      maxPerCategory: undefined,
      freshnessBoostDays: undefined,
      injectLongTail: false,
      longTailPercentage: 0,
    });
  });

  it('round 1: maxPerCategory × 2, long-tail on with +10 points (10 when unset), freshness × 2', () => {
    expect(constraintsForRound(configured, 1)).toEqual({
      maxPerCategory: 6,
      freshnessBoostDays: 10,
      injectLongTail: true,
      longTailPercentage: 30,
    });
    expect(constraintsForRound({}, 1)).toEqual({
      maxPerCategory: undefined,
      freshnessBoostDays: undefined,
      injectLongTail: true,
      longTailPercentage: 10,
    });
  });

  it('round 2: no diversity cap, +20 points (at most 50), freshness × 4', () => {
    expect(constraintsForRound(configured, 2)).toEqual({
      maxPerCategory: undefined,
      freshnessBoostDays: 20,
      injectLongTail: true,
      longTailPercentage: 40,
    });
    expect(constraintsForRound({ longTailPercentage: 45 }, 2).longTailPercentage).toBe(50);
    expect(constraintsForRound({}, 2).longTailPercentage).toBe(20);
  });
});
