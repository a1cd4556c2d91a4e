import type { ItemNeighbours } from '../../models/item-neighbours.js';
import { requestPools, type CandidatePool } from '../candidate-pool.js';
import { ScoreAccumulator } from '../id-marks.js';

const accumulator = new ScoreAccumulator();

/**
 * Sums weighted neighbour lists: score(n) = Σ_seed weight(seed) × similarity(seed, n).
 * Seeds themselves are never candidates. The pool comes back unordered: the candidate source ranks as
 * much of it as a request reads (CandidatePool.rankPrefix).
 */
export function scoreNeighbours(
  model: ItemNeighbours,
  seeds: readonly number[],
  seedWeights: readonly number[],
): CandidatePool {
  const { neighbours, weights } = model;
  let expected = seeds.length;
  for (const seed of seeds) expected += model.rangeEnd(seed) - model.rangeStart(seed);
  accumulator.begin(expected);
  for (const seed of seeds) accumulator.exclude(seed);
  for (let s = 0; s < seeds.length; s++) {
    const end = model.rangeEnd(seeds[s]);
    const weight = seedWeights[s];
    for (let k = model.rangeStart(seeds[s]); k < end; k++)
      accumulator.add(neighbours[k], weight * weights[k]);
  }
  const pool = requestPools.take(accumulator.size);
  for (let k = 0; k < accumulator.size; k++) {
    const sum = accumulator.sumAt(k);
    if (sum !== -Infinity) pool.push(accumulator.idAt(k), sum);
  }
  return pool;
}
