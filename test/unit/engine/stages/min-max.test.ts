import { describe, expect, it } from 'vitest';
import { HALF_VALUES, toHalf } from '../../../../src/state/half-float.js';
import { minMax } from '../../../../src/engine/stages/min-max.js';
import type { RelaxRound } from '../../../../src/engine/stages/constraints.js';
import {
  buildTenant,
  contextOf,
  daysAgo,
  entriesOf,
  externalIds,
  item,
  poolOf,
  rank,
  rankIds,
} from '../../../support/tenant-fixture.js';

/**
 * Seed s: neighbours a1 .8, a2 .7, a3 .6 (category A), b1 .5 (B, created 8 days ago). No interactions,
 * so no item is long-tail (the median count is 0).
 */
const tenant = buildTenant({
  items: [
    's',
    item('a1', { category: 'A' }),
    item('a2', { category: 'A' }),
    item('a3', { category: 'A' }),
    item('b1', { category: 'B', createdAt: daysAgo(8) }),
  ],
  neighbours: [
    ['s', 'a1', 0.8],
    ['s', 'a2', 0.7],
    ['s', 'a3', 0.6],
    ['s', 'b1', 0.5],
  ],
  scenarios: [
    { slug: 'capped', logicType: 'item-to-item', maxItems: 3 },
    ...[2, 3, 4].map((minItems) => ({
      slug: `relax-min${minItems}`,
      logicType: 'item-to-item' as const,
      constraints: { maxPerCategory: 1 },
      minItems,
      autoRelaxConstraints: true,
    })),
    { slug: 'no-relax', logicType: 'item-to-item', constraints: { maxPerCategory: 1 }, minItems: 3 },
    {
      slug: 'fresh-round1',
      logicType: 'item-to-item',
      constraints: { maxPerCategory: 1, freshnessBoostDays: 5 },
      minItems: 3,
      autoRelaxConstraints: true,
    },
    {
      slug: 'fresh-round2',
      logicType: 'item-to-item',
      constraints: { maxPerCategory: 1, freshnessBoostDays: 3 },
      minItems: 4,
      autoRelaxConstraints: true,
    },
  ],
});

function scored(slug: string): [string, number][] {
  const list = rank(tenant, { scenario: slug, itemId: 's' });
  return externalIds(tenant, list.ids).map((id, i) => [id, list.scores![i]]);
}

describe('stage 10, min/max', () => {
  it('the list is cut to the requested count', () => {
    expect(rankIds(tenant, { logicType: 'item-to-item', itemId: 's', count: 2 })).toEqual(['a1', 'a2']);
  });

  it('the count is capped by maxItems', () => {
    expect(rankIds(tenant, { scenario: 'capped', itemId: 's', count: 10 })).toEqual(['a1', 'a2', 'a3']);
    expect(rankIds(tenant, { scenario: 'capped', itemId: 's', count: 2 })).toEqual(['a1', 'a2']);
  });

  it('runs the ranking stages once when minItems is met', () => {
    const rounds: RelaxRound[] = [];
    const context = contextOf(tenant, { scenario: 'relax-min2', itemId: 's' });
    const pool = poolOf(tenant, [
      ['a1', 2],
      ['b1', 1],
    ]);
    const list = minMax(pool, context, (ranked, round) => {
      rounds.push(round);
      return ranked;
    });
    expect(rounds).toEqual([0]);
    expect(entriesOf(tenant, list)).toEqual([
      ['a1', 2],
      ['b1', 1],
    ]);
  });

  it('re-runs rounds 1 then 2 from the same candidates while fewer than minItems remain', () => {
    const rounds: RelaxRound[] = [];
    const context = contextOf(tenant, { scenario: 'relax-min4', itemId: 's' });
    const pool = poolOf(tenant, [
      ['a1', 3],
      ['a2', 2],
      ['a3', 1],
    ]);
    const list = minMax(pool, context, (ranked, round) => {
      rounds.push(round);
      expect(ranked.length).toBe(3);
      return ranked.truncate(round + 1);
    });
    expect(rounds).toEqual([0, 1, 2]);
    expect(list.length).toBe(3);
  });

  it('a count below minItems is met by a full list of count items: no relaxation', () => {
    // relax-min4 with count 2: the diversity-capped list [a1, b1] is already full.
    expect(rankIds(tenant, { scenario: 'relax-min4', itemId: 's', count: 2 })).toEqual(['a1', 'b1']);
    // With count 3 the capped list is short of min(4, 3): round 1 (cap 2) fills it.
    expect(rankIds(tenant, { scenario: 'relax-min4', itemId: 's', count: 3 })).toEqual(['a1', 'a2', 'b1']);
  });

  it('without autoRelaxConstraints a short list stays short', () => {
    expect(rankIds(tenant, { scenario: 'no-relax', itemId: 's' })).toEqual(['a1', 'b1']);
  });

  it('no relaxation when minItems is met', () => {
    expect(rankIds(tenant, { scenario: 'relax-min2', itemId: 's' })).toEqual(['a1', 'b1']);
  });

  it('round 1 doubles maxPerCategory', () => {
    expect(rankIds(tenant, { scenario: 'relax-min3', itemId: 's' })).toEqual(['a1', 'a2', 'b1']);
  });

  it('round 2 removes the diversity cap', () => {
    expect(rankIds(tenant, { scenario: 'relax-min4', itemId: 's' })).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('round 1 doubles the freshness window (5 → 10 days reaches b1, 8 days old)', () => {
    expect(scored('fresh-round1')).toEqual([
      // Neighbour weights are held in half precision.
      ['a1', HALF_VALUES[toHalf(0.8)]],
      ['b1', 0.5 * 1.5],
      ['a2', HALF_VALUES[toHalf(0.7)]],
    ]);
  });

  it('round 2 multiplies the freshness window by 4 (3 → 12 days; round 1 with 6 days does not reach b1)', () => {
    expect(scored('fresh-round2').map(([id]) => id)).toEqual(['a1', 'b1', 'a2', 'a3']);
    expect(scored('fresh-round2')[1][1]).toBe(0.75);
  });

  it('the relax rounds force long-tail injection on', () => {
    // a1-a3 have 3 events each, t none: t is long-tail. Round 2 (no cap, 20%) reserves 1 of 3 slots for it.
    const tail = buildTenant({
      items: ['s', ...['a1', 'a2', 'a3', 't'].map((id) => item(id, { category: 'A' }))],
      events: ['a1', 'a2', 'a3'].map((id) => ({ item: id, times: 3 })),
      neighbours: [
        ['s', 'a1', 0.8],
        ['s', 'a2', 0.7],
        ['s', 'a3', 0.6],
        ['s', 't', 0.5],
      ],
      scenarios: [
        {
          slug: 'relaxing',
          logicType: 'item-to-item',
          constraints: { maxPerCategory: 1 },
          minItems: 3,
          autoRelaxConstraints: true,
        },
      ],
    });
    expect(rankIds(tail, { scenario: 'relaxing', itemId: 's', count: 3 })).toEqual(['a1', 'a2', 't']);
  });
});
