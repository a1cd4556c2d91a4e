import type { ItemNeighbours } from '../../models/item-neighbours.js';
import { requestPools, type CandidatePool } from '../candidate-pool.js';
import { ScoreAccumulator } from '../id-marks.js';

const accumulator = new ScoreAccumulator();
/** Where the reads that fetch the lists early leave their sum, so that they are not optimized away. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read, on purpose
let prefetched = 0;

/**
 * Sums weighted neighbour lists: score(n) = Σ_seed weight(seed) × similarity(seed, n).
 * Seeds themselves are never candidates, nor items whose sum is not positive. The pool comes back unordered: the candidate source ranks as
 * much of it as a request reads (CandidatePool.rankPrefix).
 */
export function scoreNeighbours(
  model: ItemNeighbours,
  seeds: readonly number[],
  seedWeights: readonly number[],
): CandidatePool {
  const { neighbours, weights } = model;
  let expected = seeds.length;
  let touched = 0;
  for (const seed of seeds) {
    const start = model.rangeStart(seed);
    const end = model.rangeEnd(seed);
    expected += end - start;
    // Each seed's lists lie somewhere in a model of megabytes, most likely out of the CPU's caches and
    // its address translation buffers. Reading both ends of every list first has the memory fetch them
    // all at once; the summing loop below would otherwise wait for them one seed after another.
    if (end > start) touched += neighbours[start] + weights[start] + neighbours[end - 1] + weights[end - 1];
  }
  prefetched = touched;
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
    // Seeds summed to -Infinity; a model with negative weights (EASE) may sum an item below zero, which
    // the history speaks against: neither is a candidate.
    if (sum > 0) pool.push(accumulator.idAt(k), sum);
  }
  return pool;
}
