import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CandidatePool, PoolArena } from '../../../src/engine/candidate-pool.js';

function poolOf(entries: [id: number, score: number][]): CandidatePool {
  const pool = new CandidatePool(4);
  entries.forEach(([id, score], i) => pool.push(id, score, i % 3 === 0));
  return pool;
}

function entries(pool: CandidatePool): [number, number, number][] {
  return Array.from({ length: pool.length }, (_, i) => [pool.ids[i], pool.scores[i], pool.fill[i]]);
}

const entryLists = fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 8 })), {
  maxLength: 300,
});

/** The entries as a stable descending sort by score leaves them. */
function stablySorted(pool: CandidatePool): [number, number, number][] {
  return entries(pool)
    .map((entry, position) => ({ entry, position }))
    .sort((a, b) => b.entry[1] - a.entry[1] || a.position - b.position)
    .map(({ entry }) => entry);
}

/**
 * Extends the pool's ranked prefix through the asks of `ks`, expecting each time the best entries by score
 * then id before it, and every entry kept.
 */
function expectRankedPrefixes(pool: CandidatePool, ks: number[]): void {
  const idAndScore = (list: [number, number, number][]) => list.map(([id, score]) => [id, score]);
  const all = entries(pool).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  let asked = 0;
  for (const k of ks) {
    asked = Math.max(asked, k);
    pool.rankPrefix(asked);
    const ranked = Math.min(asked, pool.length);
    expect(idAndScore(entries(pool).slice(0, ranked))).toEqual(idAndScore(all.slice(0, ranked)));
  }
  expect(entries(pool).sort()).toEqual([...all].sort());
}

describe('CandidatePool ordering', () => {
  it('sortByScore is a stable descending sort, carrying ids and fill along', () => {
    fc.assert(
      fc.property(entryLists, (list) => {
        const pool = poolOf(list);
        const expected = stablySorted(pool);
        expect(entries(pool.sortByScore())).toEqual(expected);
      }),
    );
  });

  it('sortByScoreWithin merges classes kept in order by common factors into the stable sort', () => {
    const factors = [1, 1.5, 1.2, 1.5 * 1.2, 3, 0.25, 7, 1e-3];
    fc.assert(
      fc.property(entryLists, fc.array(fc.integer({ min: 0, max: factors.length - 1 })), (list, picks) => {
        const pool = poolOf(list).sortByScore();
        const classes = Uint8Array.from(
          { length: pool.length },
          (_, i) => picks[i % (picks.length || 1)] ?? 0,
        );
        classes.forEach((c, i) => (pool.scores[i] *= factors[c]));
        const expected = stablySorted(pool);
        expect(entries(pool.sortByScoreWithin(classes, factors.length))).toEqual(expected);
      }),
    );
  });

  it('rankPrefix puts the best k first, by score then id, and keeps every entry, however it is extended', () => {
    fc.assert(
      fc.property(entryLists, fc.array(fc.integer({ min: 0, max: 320 }), { maxLength: 5 }), (list, ks) => {
        expectRankedPrefixes(poolOf(list), ks);
      }),
    );
  });

  it('rankPrefix ranks large pools of distinct scores exactly, in whatever order they come', () => {
    const scoreLists = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
      minLength: 40,
      maxLength: 2_000,
    });
    fc.assert(
      fc.property(
        scoreLists,
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 4 }),
        (scores, ks) => {
          expectRankedPrefixes(poolOf(scores.map((score, id) => [id, score])), ks);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rankPrefix stays exact when the entries it samples are the best ones, or all share a score', () => {
    // Every tenth entry is among the best: a sample of evenly spaced entries sees nothing else.
    const skewed = Array.from({ length: 640 }, (_, id): [number, number] => [
      id,
      id % 10 === 0 ? 2 + id : id / 1e4,
    ]);
    const tied = Array.from({ length: 640 }, (_, id): [number, number] => [id, 1]);
    for (const list of [skewed, tied]) {
      const pool = poolOf(list);
      pool.rankPrefix(100);
      const best = list.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 100);
      expect(
        entries(pool)
          .slice(0, 100)
          .map(([id, score]) => [id, score]),
      ).toEqual(best);
    }
  });
});

describe('PoolArena', () => {
  it('hands out distinct empty pools until recycled, then the same pools again, emptied', () => {
    const arena = new PoolArena();
    const first = arena.take(10);
    first.push(1, 1);
    const second = arena.take(1_000);
    expect(second).not.toBe(first);
    expect(second.ids.length).toBeGreaterThanOrEqual(1_000);
    second.push(2, 2);
    arena.recycle();
    const again = arena.take(3_000);
    expect(again).toBe(first);
    expect(again.length).toBe(0);
    expect(again.ids.length).toBeGreaterThanOrEqual(3_000);
    expect(arena.take(0)).toBe(second);
    expect(arena.take(0)).not.toBe(second);
  });
});
