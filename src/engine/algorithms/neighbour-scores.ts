import { HALF_VALUES } from '../../state/half-float.js';
import type { ItemNeighbours } from '../../state/item-neighbours.js';
import { requestPools, type CandidatePool } from '../candidate-pool.js';
import { ScoreAccumulator } from '../id-marks.js';

const accumulator = new ScoreAccumulator();
let denseSums = new Float64Array(1024);
/** Where the reads that fetch the lists early leave their sum, so that they are not optimized away. */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read, on purpose
let prefetched = 0;

/**
 * Sums weighted neighbour lists: score(n) = Σ_seed weight(seed) × similarity(seed, n).
 * Seeds themselves are never candidates, nor items whose sum is not positive. The pool comes back
 * unordered: the candidate source ranks as much of it as a request reads (CandidatePool.rankPrefix).
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
  if (model.compact) return compactSums(model, model.compact, seeds, seedWeights);
  // Room for the ids that can come up, not for every addition: long lists over few items (EASE) would
  // otherwise spread the sums over a table far larger than the CPU's caches.
  accumulator.begin(Math.min(expected, model.reach + seeds.length));
  for (const seed of seeds) accumulator.exclude(seed);
  for (let s = 0; s < seeds.length; s++) {
    const end = model.rangeEnd(seeds[s]);
    const weight = seedWeights[s];
    for (let k = model.rangeStart(seeds[s]); k < end; k++)
      accumulator.add(neighbours[k], weight * HALF_VALUES[weights[k]]);
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

/** scoreNeighbours over a model's compact numbering: the sums in a dense array of the model's reach. */
function compactSums(
  model: ItemNeighbours,
  compact: NonNullable<ItemNeighbours['compact']>,
  seeds: readonly number[],
  seedWeights: readonly number[],
): CandidatePool {
  const { local, members, localOf, weights } = compact;
  if (denseSums.length < model.reach) denseSums = new Float64Array(model.reach);
  const sums = denseSums;
  sums.fill(0, 0, model.reach);
  for (let s = 0; s < seeds.length; s++) {
    const end = model.rangeEnd(seeds[s]);
    const weight = seedWeights[s];
    for (let k = model.rangeStart(seeds[s]); k < end; k++) sums[local[k]] += weight * weights[k];
  }
  for (const seed of seeds) {
    const l = seed >= 0 && seed < localOf.length ? localOf[seed] : -1;
    if (l >= 0) sums[l] = -Infinity;
  }
  const pool = requestPools.take(model.reach);
  for (let l = 0; l < model.reach; l++) if (sums[l] > 0) pool.push(members[l], sums[l]);
  return pool;
}
