import { describe, expect, it } from 'vitest';
import { boosters } from '../../../../src/engine/stages/boosters.js';
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
  type RequestBody,
} from '../../../support/tenant-fixture.js';

/** Seed s: neighbours a 0.5, b 0.25, c 0.125. b is acme and red, c is red. */
const tenant = buildTenant({
  items: [
    's',
    item('a', { attributes: { brand: 'other' } }),
    item('b', { attributes: { brand: 'acme', color: 'red' } }),
    item('c', { attributes: { color: 'red' } }),
  ],
  events: [
    { item: 'b', country: 'DE', times: 50 },
    { item: 'a', user: 'reader', ts: daysAgo(2) },
    { item: 'c', user: 'reader', ts: daysAgo(1) },
  ],
  neighbours: [
    ['s', 'a', 0.5],
    ['s', 'b', 0.25],
    ['s', 'c', 0.125],
  ],
  rules: [{ slug: 'acme-rule', type: 'booster', expression: `boost by 2 where 'brand' = "acme"` }],
  scenarios: [
    {
      slug: 'boosted',
      logicType: 'item-to-item',
      boosters: [`boost by 3 where 'color' = "red"`, `boost by 4 where 'brand' = "acme"`],
    },
    {
      slug: 'with-rule',
      logicType: 'item-to-item',
      rulesSlugs: ['acme-rule'],
      boosters: [`boost by 3 where 'color' = "red"`],
    },
    { slug: 'recent', logicType: 'recently-viewed', boosters: [`boost by 10 where 'brand' = "other"`] },
  ],
});

function scored(body: RequestBody): [string, number][] {
  const list = rank(tenant, body);
  return externalIds(tenant, list.ids).map((id, i) => [id, list.scores![i]]);
}

/** Stage 6 of the 'boosted' scenario over a crafted pool whose entry `fillAt` is a fill candidate. */
function boostedPool(entries: [string, number][], fillAt: number): [string, number, number][] {
  const pool = poolOf(tenant, entries);
  pool.fill[fillAt] = 1;
  const boosted = boosters(pool, contextOf(tenant, { scenario: 'boosted', itemId: 's' }));
  return entriesOf(tenant, boosted).map(([id, score], i) => [id, score, boosted.fill[i]]);
}

describe('stage 6, boosters', () => {
  it('each matching booster multiplies the score; boosters stack by multiplication', () => {
    expect(scored({ scenario: 'boosted', itemId: 's' })).toEqual([
      ['b', 0.25 * 3 * 4],
      ['a', 0.5],
      ['c', 0.125 * 3],
    ]);
  });

  it('booster rules stack with the scenario boosters', () => {
    expect(scored({ scenario: 'with-rule', itemId: 's' })).toEqual([
      ['b', 0.25 * 2 * 3],
      ['a', 0.5],
      ['c', 0.125 * 3],
    ]);
  });

  it('boosters multiply the already-lifted score', () => {
    const lifted = rank(tenant, { logicType: 'item-to-item', itemId: 's', country: 'DE' });
    const boosted = rank(tenant, { scenario: 'boosted', itemId: 's', country: 'DE' });
    const scoreOf = (list: typeof lifted, id: string) =>
      list.scores![externalIds(tenant, list.ids).indexOf(id)];
    expect(scoreOf(lifted, 'b')).not.toBe(0.25);
    expect(scoreOf(boosted, 'b')).toBeCloseTo(scoreOf(lifted, 'b') * 12, 12);
    expect(scoreOf(boosted, 'c')).toBeCloseTo(scoreOf(lifted, 'c') * 3, 12);
  });

  it('a pool that came in sorted leaves sorted, stably, fill flags carried along', () => {
    const entries: [string, number][] = [
      ['a', 12],
      ['c', 4],
      ['b', 1],
      ['s', 1],
    ];
    expect(boostedPool(entries, 2)).toEqual([
      ['a', 12, 0],
      ['c', 12, 0],
      ['b', 12, 1],
      ['s', 1, 0],
    ]);
  });

  it('a pool that came in unsorted is boosted in place, left for a later stage to sort', () => {
    const entries: [string, number][] = [
      ['a', 1],
      ['b', 1],
      ['c', 2],
    ];
    expect(boostedPool(entries, 1)).toEqual([
      ['a', 1, 0],
      ['b', 12, 1],
      ['c', 6, 0],
    ]);
  });

  it('request boosters replace the scenario list, and [] clears it', () => {
    expect(
      scored({ scenario: 'boosted', itemId: 's', boosters: [`boost by 8 where 'brand' = "other"`] }),
    ).toEqual([
      ['a', 4],
      ['b', 0.25],
      ['c', 0.125],
    ]);
    expect(scored({ scenario: 'boosted', itemId: 's', boosters: [] }).map(([id]) => id)).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('do not apply to recently-viewed, which has no scores', () => {
    expect(rankIds(tenant, { scenario: 'recent', userId: 'reader' })).toEqual(['c', 'a']);
    expect(rank(tenant, { scenario: 'recent', userId: 'reader' }).scores).toBeUndefined();
  });
});
