import { describe, expect, it } from 'vitest';
import { itemKnn, popularity } from '../../../jobs/evaluate/baselines.js';
import { MetricsSum, userMetrics } from '../../../jobs/evaluate/metrics.js';
import { splitCounts, splitDataset, type DatasetEvent } from '../../../jobs/evaluate/split.js';

describe('ranking metrics', () => {
  it('scores a list against held-out items as worked by hand', () => {
    // Hits at positions 2 and 4 of 5 shown, 3 relevant items (one never shown).
    const metrics = userMetrics(['x', 'a', 'y', 'b', 'z'], new Set(['a', 'b', 'c']), 5);
    const dcg = 1 / Math.log2(3) + 1 / Math.log2(5);
    const ideal = 1 + 1 / Math.log2(3) + 1 / Math.log2(4);
    expect(metrics.ndcg).toBeCloseTo(dcg / ideal, 12);
    expect(metrics.recall).toBeCloseTo(2 / 3, 12);
    expect(metrics.hit).toBe(1);
    expect(metrics.mrr).toBeCloseTo(1 / 2, 12);
  });

  it('reads only the first k of the list, and the ideal has at most k hits', () => {
    const metrics = userMetrics(['x', 'y', 'a'], new Set(['a', 'b', 'c']), 2);
    expect(metrics).toEqual({ ndcg: 0, recall: 0, hit: 0, mrr: 0 });
    const perfect = userMetrics(['a', 'b'], new Set(['a', 'b', 'c']), 2);
    expect(perfect.ndcg).toBeCloseTo(1, 12);
  });

  it('averages users and counts the catalog share shown', () => {
    const sum = new MetricsSum();
    sum.add(['a', 'b'], new Set(['a']), 2);
    sum.add(['c', 'a'], new Set(['b']), 2);
    const averages = sum.averages(10);
    expect(averages.users).toBe(2);
    expect(averages.hit).toBe(0.5);
    expect(averages.mrr).toBe(0.5);
    expect(averages.coverage).toBeCloseTo(3 / 10, 12);
  });
});

describe('splits', () => {
  it('counts 80/10/10 as RecBole does, giving valid and test one event of small histories', () => {
    expect(splitCounts(10)).toEqual([8, 1, 1]);
    expect(splitCounts(25)).toEqual([21, 2, 2]);
    expect(splitCounts(5)).toEqual([3, 1, 1]);
    expect(splitCounts(2)).toEqual([1, 0, 1]);
    expect(splitCounts(1)).toEqual([1, 0, 0]);
  });

  const events: DatasetEvent[] = [];
  for (let u = 0; u < 20; u++) {
    for (let i = 0; i < 10 + u; i++) events.push({ user: `u${u}`, item: `i${(u * 7 + i) % 40}_${i}`, ts: i });
  }

  it('random: the same seed gives the same split; every event lands in exactly one part', () => {
    const first = splitDataset(events, 'random', 2020);
    expect(splitDataset(events, 'random', 2020)).toEqual(first);
    expect(splitDataset(events, 'random', 7)).not.toEqual(first);
    const all = [...first.train, ...first.valid, ...first.test].map((e) => `${e.user}/${e.item}`).sort();
    expect(all).toEqual(events.map((e) => `${e.user}/${e.item}`).sort());
  });

  it('temporal: valid and test are each user’s latest events', () => {
    const split = splitDataset(events, 'temporal', 1);
    for (let u = 0; u < 20; u++) {
      const latestTrain = Math.max(...split.train.filter((e) => e.user === `u${u}`).map((e) => e.ts));
      const heldOut = [...split.valid, ...split.test].filter((e) => e.user === `u${u}`);
      expect(heldOut.length).toBeGreaterThan(0);
      for (const event of heldOut) expect(event.ts).toBeGreaterThan(latestTrain);
    }
  });
});

describe('baselines', () => {
  const train: DatasetEvent[] = [
    { user: 'u1', item: 'a', ts: 0 },
    { user: 'u1', item: 'b', ts: 0 },
    { user: 'u2', item: 'a', ts: 0 },
    { user: 'u2', item: 'b', ts: 0 },
    { user: 'u3', item: 'a', ts: 0 },
    { user: 'u3', item: 'c', ts: 0 },
    { user: 'u4', item: 'c', ts: 0 },
    { user: 'u4', item: 'd', ts: 0 },
  ];

  it('popularity lists the most used items the user does not have', () => {
    expect(popularity(train).rank('u4', new Set(['c', 'd']), 2)).toEqual(['a', 'b']);
  });

  it('item-kNN scores each item from its own nearest items in the history', () => {
    // u5 has b: a is b's nearest (cos 2/sqrt(2·3)); c and d share no user with b.
    const knn = itemKnn([...train, { user: 'u5', item: 'b', ts: 0 }], 1);
    expect(knn.rank('u5', new Set(['b']), 3)).toEqual(['a']);
    // u3 has a and c: d scores cos(c, d) = 1/√2 (c is d's nearest), b scores cos(a, b) = 2/3.
    expect(knn.rank('u3', new Set(['a', 'c']), 3)).toEqual(['d', 'b']);
  });
});
