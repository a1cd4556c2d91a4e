import type { ItemNeighbours } from '../../models/item-neighbours.js';
import { CandidatePool } from '../candidate-pool.js';
import { IdMarks, ScoreAccumulator } from '../id-marks.js';

const accumulator = new ScoreAccumulator();
const excluded = new IdMarks();

/**
 * Sums weighted neighbour lists: score(n) = Σ_seed weight(seed) × similarity(seed, n).
 * Seeds themselves are never candidates. The pool comes back unordered: the candidate source ranks as
 * much of it as a request reads (CandidatePool.rankPrefix).
 */
export function scoreNeighbours(
  model: ItemNeighbours,
  seeds: readonly number[],
  seedWeights: readonly number[],
  itemCount: number,
): CandidatePool {
  accumulator.begin(itemCount);
  excluded.begin(itemCount);
  for (const seed of seeds) excluded.mark(seed);
  seeds.forEach((seed, index) => {
    const [start, end] = model.range(seed);
    for (let k = start; k < end; k++) {
      const neighbour = model.neighbours[k];
      if (!excluded.has(neighbour)) accumulator.add(neighbour, seedWeights[index] * model.weights[k]);
    }
  });
  const { ids, score } = accumulator.entries();
  const pool = new CandidatePool(Math.max(ids.length, 16));
  for (const id of ids) pool.push(id, score(id));
  return pool;
}
