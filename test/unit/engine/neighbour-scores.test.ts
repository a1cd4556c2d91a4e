import { describe, expect, it } from 'vitest';
import { scoreNeighbours } from '../../../src/engine/algorithms/neighbour-scores.js';
import { requestPools } from '../../../src/engine/candidate-pool.js';
import { ItemNeighbours } from '../../../src/state/item-neighbours.js';

/** A model over `items` ids whose lists (`length` entries each) name only ids below `reach`. */
function model(items: number, reach: number, length: number, seed: number): ItemNeighbours {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const offsets = new Int32Array(items + 1);
  const neighbours: number[] = [];
  const weights: number[] = [];
  for (let item = 0; item < items; item++) {
    for (let k = 0; k < length; k++) {
      neighbours.push(Math.floor(random() * reach));
      // Weights of either sign, as EASE's.
      weights.push(Math.round((random() - 0.3) * 100) / 100);
    }
    offsets[item + 1] = neighbours.length;
  }
  return new ItemNeighbours(offsets, Int32Array.from(neighbours), Float32Array.from(weights), 0, 0);
}

/** Σ_seed weight(seed) × similarity(seed, n), worked out plainly: positive sums of non-seeds. */
function expected(m: ItemNeighbours, seeds: number[], seedWeights: number[]): Map<number, number> {
  const sums = new Map<number, number>();
  seeds.forEach((seed, s) => {
    for (let k = m.rangeStart(seed); k < m.rangeEnd(seed); k++)
      sums.set(m.neighbours[k], (sums.get(m.neighbours[k]) ?? 0) + seedWeights[s] * m.weightAt(k));
  });
  for (const seed of seeds) sums.delete(seed);
  return new Map([...sums].filter(([, sum]) => sum > 0));
}

function scored(m: ItemNeighbours, seeds: number[], seedWeights: number[]): Map<number, number> {
  requestPools.recycle();
  const pool = scoreNeighbours(m, seeds, seedWeights);
  const result = new Map<number, number>();
  for (let k = 0; k < pool.length; k++) result.set(pool.ids[k], pool.scores[k]);
  return result;
}

describe('scoreNeighbours', () => {
  const cases = [
    // Long lists over few items (as EASE's): summed in the compact numbering.
    { name: 'compact', model: model(400, 60, 40, 3), compact: true },
    // Short lists over many items (as co-occurrence's): summed in a hash table.
    { name: 'hashed', model: model(400, 400, 5, 5), compact: false },
  ];

  it.each(cases)('$name: sums every seed’s weighted lists, keeping positive non-seeds', (c) => {
    expect(c.model.compact !== undefined).toBe(c.compact);
    const seeds = [3, 17, 42, 5, 399, 1_000_000];
    const seedWeights = [1, 0.5, 2, 0.25, 1.5, 3];
    const got = scored(c.model, seeds, seedWeights);
    const want = expected(c.model, seeds, seedWeights);
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([...want.keys()].sort((a, b) => a - b));
    for (const [id, sum] of want) expect(got.get(id)).toBeCloseTo(sum, 5);
    for (const seed of seeds) expect(got.has(seed)).toBe(false);
  });

  it('counts the distinct items the lists reach', () => {
    expect(cases[0].model.reach).toBe(60);
    expect(ItemNeighbours.empty().reach).toBe(0);
  });
});
