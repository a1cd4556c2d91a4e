import { afterEach, describe, expect, it } from 'vitest';
import { BestOf, PairSums, readUserItemLists } from '../../../jobs/item-models/item-pairs.js';
import { LakeDb } from '../../../jobs/lake/lake-db.js';

function uniformFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

let lake: LakeDb | undefined;
afterEach(() => {
  lake?.close();
  lake = undefined;
});

/** A random user × item matrix in a scratch lake's table `m (u, i, v)`, and the same as a dense array. */
async function randomMatrix(users: number, items: number, seed: number): Promise<Float64Array> {
  const uniform = uniformFrom(seed);
  const dense = new Float64Array(users * items);
  const rows: string[] = [];
  for (let u = 0; u < users; u++) {
    for (let i = 0; i < items; i++) {
      if (uniform() > 0.3) continue;
      dense[u * items + i] = 1 + Math.round(uniform() * 8) / 4;
      rows.push(`(${u}, ${i}, ${dense[u * items + i]})`);
    }
  }
  lake = await LakeDb.scratch({ memoryLimit: '256MB', threads: 1 });
  await lake.db.run(`CREATE TABLE m AS SELECT * FROM (VALUES ${rows.join(', ')}) t(u, i, v)`);
  return dense;
}

describe('item pairs', () => {
  it('sums each pair over the users the two items share, each user weighted by its factor', async () => {
    const [users, items] = [40, 25];
    const dense = await randomMatrix(users, items, 7);
    const lists = await readUserItemLists(lake!, 'SELECT u::INTEGER, i::INTEGER, v::DOUBLE FROM m', items);
    expect(lists.users).toBe(users);
    const factor = Float64Array.from({ length: users }, (_, u) => 1 / (u + 1));
    const pairs = new PairSums(lists, factor);
    for (let x = 0; x < items; x++) {
      const count = pairs.of(x);
      const expected = new Map<number, number>();
      for (let u = 0; u < users; u++) {
        for (let y = 0; y < items; y++) {
          if (y === x || !dense[u * items + x] || !dense[u * items + y]) continue;
          expected.set(y, (expected.get(y) ?? 0) + factor[u] * dense[u * items + x] * dense[u * items + y]);
        }
      }
      const got = new Map(Array.from(pairs.touched.subarray(0, count), (y) => [y, pairs.sums[y]]));
      expect([...got.keys()].sort((a, b) => a - b)).toEqual([...expected.keys()].sort((a, b) => a - b));
      for (const [y, sum] of expected) expect(got.get(y)).toBeCloseTo(sum, 10);
    }
  });

  it('keeps the best entries, higher weight first and the lower id among equal weights', () => {
    const uniform = uniformFrom(3);
    const best = new BestOf(10);
    const ids = new Int32Array(30);
    const weights = new Float32Array(30);
    for (const offered of [0, 4, 10, 200]) {
      best.clear();
      // Few distinct weights, so that ties decide which entries stay.
      const entries = Array.from({ length: offered }, (_, id) => ({
        id,
        weight: Math.floor(uniform() * 5) / 4,
      }));
      for (const { id, weight } of [...entries].reverse()) best.offer(id, weight);
      const kept = best.drainInto(ids, weights, 5);
      const expected = entries.sort((a, b) => b.weight - a.weight || a.id - b.id).slice(0, 10);
      expect(kept).toBe(expected.length);
      expect(Array.from(ids.subarray(5, 5 + kept))).toEqual(expected.map(({ id }) => id));
      expect(Array.from(weights.subarray(5, 5 + kept))).toEqual(expected.map(({ weight }) => weight));
    }
  });
});
