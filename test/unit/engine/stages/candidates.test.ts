import { describe, expect, it } from 'vitest';
import { candidates } from '../../../../src/engine/stages/candidates.js';
import {
  buildTenant,
  contextOf,
  daysAgo,
  entriesOf,
  externalIds,
  rank,
  rankIds,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

/**
 * Seed s has neighbours a (0.5) and b (0.25). Popularity (30-day events + 1): p1 4, s 4, p2 3, p3 2, the
 * rest 1, normalised by the top (4). Fill scores are half the lowest own score (0.25) times that.
 */
const tenant = buildTenant({
  items: ['s', 'a', 'b', 'c', 'p1', 'p2', 'p3'],
  events: [
    { item: 'p1', times: 3 },
    { item: 's', times: 3 },
    { item: 'p2', times: 2 },
    { item: 'p3', times: 1 },
  ],
  neighbours: [
    ['s', 'a', 0.5],
    ['s', 'b', 0.25],
    ['a', 'c', 1],
  ],
});

const itemToItem: RequestBody = { logicType: 'item-to-item', itemId: 's' };

describe('stage 2, candidates', () => {
  it("the algorithm's candidates come first, then the popularity fill scored below them", () => {
    const list = rank(tenant, itemToItem);
    expect(externalIds(tenant, list.ids)).toEqual(['a', 'b', 'p1', 'p2', 'p3', 'c']);
    expect(Array.from(list.scores!)).toEqual([0.5, 0.25, 0.125, 0.09375, 0.0625, 0.03125]);
  });

  it('fill candidates are marked as fill and every one scores strictly below the lowest own score', () => {
    const batch = candidates(contextOf(tenant, itemToItem)).next(100);
    expect(entriesOf(tenant, batch).map(([id]) => id)).toEqual(['a', 'b', 'p1', 'p2', 'p3', 'c']);
    expect(Array.from(batch.fill.subarray(0, batch.length))).toEqual([0, 0, 1, 1, 1, 1]);
    const fillScores = Array.from(batch.scores.subarray(2, batch.length));
    expect(Math.max(...fillScores)).toBeLessThan(0.25);
  });

  it('no item appears twice: own candidates are skipped in the fill', () => {
    const ids = rankIds(tenant, itemToItem);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the seed is never a candidate, not even as the most popular item', () => {
    expect(rankIds(tenant, itemToItem)).not.toContain('s');
    expect(rankIds(tenant, { logicType: 'items-to-items', itemIds: ['s', 'a'] })).toEqual([
      'c',
      'b',
      'p1',
      'p2',
      'p3',
    ]);
  });

  it('the sequence is served in batches and replays identically after restart', () => {
    const source = candidates(contextOf(tenant, itemToItem));
    const first = [
      ...externalIds(tenant, source.next(3).idView()),
      ...externalIds(tenant, source.next(10).idView()),
    ];
    expect(first).toEqual(['a', 'b', 'p1', 'p2', 'p3', 'c']);
    expect(source.next(10).length).toBe(0);
    source.restart();
    expect(externalIds(tenant, source.next(10).idView())).toEqual(first);
  });

  it('the fill skips the seed and own candidates taken in earlier batches, after restarts too', () => {
    const source = candidates(contextOf(tenant, itemToItem));
    for (let pass = 0; pass < 2; pass++) {
      source.restart();
      const taken = [1, 1, 10].flatMap((size) => externalIds(tenant, source.next(size).idView()));
      expect(taken).toEqual(['a', 'b', 'p1', 'p2', 'p3', 'c']);
    }
  });

  it('without own candidates the fill is the popularity ranking itself (top score 1)', () => {
    const lonely = buildTenant({ items: ['x', 'y', 'z'], events: [{ item: 'z', times: 3 }] });
    const list = rank(lonely, { logicType: 'item-to-item', itemId: 'x' });
    expect(externalIds(lonely, list.ids)).toEqual(['z', 'y']);
    expect(Array.from(list.scores!)).toEqual([1, 0.25]);
  });

  it('recently-viewed has no fill: only the viewed items', () => {
    const viewed = buildTenant({
      items: ['a', 'b', 'p'],
      events: [
        { item: 'p', times: 5 },
        { item: 'a', user: 'u', ts: daysAgo(2) },
        { item: 'b', user: 'u', ts: daysAgo(1) },
      ],
    });
    expect(rankIds(viewed, { logicType: 'recently-viewed', userId: 'u' })).toEqual(['b', 'a']);
  });
});
