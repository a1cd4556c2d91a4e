import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import type { RelaxRound } from './constraints.js';

/**
 * Stage 10: the list is cut to count (already capped by maxItems). When it is shorter than minItems and
 * autoRelaxConstraints is on, stages 7-9 run again from the same candidates with relaxed constraints
 * (rounds 1 and 2); `rank` runs those stages for a round. A request for fewer than minItems items is
 * satisfied by a full list: relaxing cannot make it longer than count.
 */
export function minMax(
  candidates: CandidatePool,
  context: PipelineContext,
  rank: (pool: CandidatePool, round: RelaxRound) => CandidatePool,
): CandidatePool {
  const { count, minItems, autoRelaxConstraints } = context.config;
  const floor = Math.min(minItems, count);
  // The ranking stages change the pool in place; keep the candidates only if a relax round may need them.
  const mayRelax = autoRelaxConstraints && floor > 0;
  let list = rank(mayRelax ? candidates.copy() : candidates, 0).truncate(count);
  for (let round = 1 as RelaxRound; list.length < floor && autoRelaxConstraints && round <= 2; round++) {
    list = rank(candidates.copy(), round).truncate(count);
  }
  return list;
}
