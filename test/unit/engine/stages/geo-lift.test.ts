import { describe, expect, it } from 'vitest';
import { geoLift } from '../../../../src/engine/stages/geo-lift.js';
import { CandidatePool } from '../../../../src/engine/candidate-pool.js';
import {
  buildTenant,
  contextOf,
  entriesOf,
  externalIds,
  idOf,
  item,
  rank,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

/**
 * Seed s has neighbours b (0.5) and a (0.25). In the 7-day window: DE has a ×40, b ×10 and c ×1 (51
 * events, enough for its own statistics), US has b ×60, and s was viewed twice without a country (once by
 * user w): N = 113 events over I = 4 catalog items.
 */
const tenant = buildTenant({
  items: ['s', 'a', 'b', 'c'],
  events: [
    { item: 'a', country: 'DE', times: 40 },
    { item: 'b', country: 'DE', times: 10 },
    { item: 'c', country: 'DE' },
    { item: 'b', country: 'us', times: 60 },
    { item: 's', user: 'w' },
    { item: 's' },
  ],
  neighbours: [
    ['s', 'b', 0.5],
    ['s', 'a', 0.25],
  ],
});

/** CONTRACT.md: lift = ((c_i,country + 1) / (N_country + I)) / ((c_i + 1) / (N + I)). */
function lift(inCountry: number, countryTotal: number, everywhere: number): number {
  const I = 4;
  const N = 113;
  return (inCountry + 1) / (countryTotal + I) / ((everywhere + 1) / (N + I));
}

const liftA = lift(40, 51, 40);
const liftB = lift(10, 51, 70);

function topTwo(body: RequestBody): [string, number][] {
  const list = rank(tenant, body);
  return externalIds(tenant, list.ids.slice(0, 2)).map((id, i) => [id, list.scores![i]]);
}

const itemToItem: RequestBody = { logicType: 'item-to-item', itemId: 's' };

describe('stage 4, geo lift', () => {
  it('without a country the scores are the algorithm’s', () => {
    expect(topTwo(itemToItem)).toEqual([
      ['b', 0.5],
      ['a', 0.25],
    ]);
  });

  it('with a valid country each own candidate is multiplied by the smoothed lift, which can reorder', () => {
    const list = rank(tenant, { ...itemToItem, country: 'DE' });
    expect(externalIds(tenant, list.ids)).toEqual(['a', 'b', 'c']);
    expect(list.scores![0]).toBeCloseTo(0.25 * liftA, 12);
    expect(list.scores![1]).toBeCloseTo(0.5 * liftB, 12);
  });

  it('fill candidates are ranked by geo-aware popularity and not lifted a second time', () => {
    // Geo-aware popularity is (c_i + 1) × lift_i, which is proportional to c_i,DE + 1: c (1 + 1) over the
    // top a (40 + 1), times half the lowest own score.
    const list = rank(tenant, { ...itemToItem, country: 'DE' });
    expect(list.scores![2]).toBeCloseTo((0.25 * 0.5 * 2) / 41, 12);
  });

  it('country codes are case-insensitive', () => {
    expect(topTwo({ ...itemToItem, country: 'de' })).toEqual(topTwo({ ...itemToItem, country: 'DE' }));
  });

  it('a country with too few events borrows its cluster’s statistics', () => {
    expect(contextOf(tenant, { ...itemToItem, country: 'AT' }).geo?.scope).toBe('cluster:western-europe');
    expect(topTwo({ ...itemToItem, country: 'AT' })).toEqual(topTwo({ ...itemToItem, country: 'DE' }));
  });

  it.each(['OTH', 'XX', 'DEU', '', 'BR'])('country %j ranks globally (no lift)', (country) => {
    expect(contextOf(tenant, { ...itemToItem, country }).geo).toBeUndefined();
    expect(topTwo({ ...itemToItem, country })).toEqual([
      ['b', 0.5],
      ['a', 0.25],
    ]);
  });

  it('is skipped for weighted-history: its own candidates keep their scores', () => {
    const body: RequestBody = { logicType: 'user-to-item', userId: 'w' };
    expect(topTwo({ ...body, country: 'DE' })).toEqual([
      ['b', 0.5],
      ['a', 0.25],
    ]);
  });

  it('weighted-history fill candidates do use geo data', () => {
    const body: RequestBody = { logicType: 'user-to-item', userId: 'w' };
    // Fill order is popularity: s (2 events) before c (1) globally, but c (1 in DE) before s (0 in DE).
    expect(externalIds(tenant, rank(tenant, body).ids)).toEqual(['b', 'a', 's', 'c']);
    expect(externalIds(tenant, rank(tenant, { ...body, country: 'DE' }).ids)).toEqual(['b', 'a', 'c', 's']);
  });

  it('is skipped for recently-viewed, whose context has no geo at all', () => {
    const body: RequestBody = { logicType: 'recently-viewed', userId: 'w', country: 'DE' };
    expect(contextOf(tenant, body).geo).toBeUndefined();
    expect(externalIds(tenant, rank(tenant, body).ids)).toEqual(['s']);
  });

  it('multiplies only own candidates of a pool, leaving fill entries as they are', () => {
    const pool = new CandidatePool();
    pool.push(idOf(tenant, 'a'), 1);
    pool.push(idOf(tenant, 'c'), 1, true);
    const [[, lifted], [, filled]] = entriesOf(
      tenant,
      geoLift(pool, contextOf(tenant, { ...itemToItem, country: 'DE' })),
    );
    expect(lifted).toBeCloseTo(liftA, 12);
    expect(filled).toBe(1);
  });

  it('category-popularity candidates (similar-products) are lifted once, like any other', () => {
    // Category k: x1 has 10 events, all in DE; y1 has 100, 12 of them in DE; z (another category) fills DE.
    // Lifted once, the rank follows DE counts (y1 12 > x1 10); lifted twice it would put x1 first.
    const geo = buildTenant({
      items: [
        item('s', { category: 'k' }),
        item('x1', { category: 'k' }),
        item('y1', { category: 'k' }),
        'z',
      ],
      events: [
        { item: 'x1', country: 'DE', times: 10 },
        { item: 'y1', country: 'DE', times: 12 },
        { item: 'y1', times: 88 },
        { item: 'z', country: 'DE', times: 28 },
      ],
    });
    const smoothed = (inDe: number, everywhere: number) =>
      (inDe + 1) / (50 + 4) / ((everywhere + 1) / (138 + 4));
    const list = rank(geo, { logicType: 'similar-products', itemId: 's', country: 'DE' });
    expect(externalIds(geo, list.ids)).toEqual(['y1', 'x1', 'z']);
    // Own scores: global popularity normalised by the top item (y1, 101), times the lift.
    expect(list.scores![0]).toBeCloseTo(smoothed(12, 100), 12);
    expect(list.scores![1]).toBeCloseTo((11 / 101) * smoothed(10, 10), 12);
  });
});
