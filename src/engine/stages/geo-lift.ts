import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/**
 * Stage 4: with a valid country, the algorithm's own candidates' scores are multiplied by their lift.
 * Skipped for weighted-history and recently-viewed; fill candidates are ranked by geo-aware
 * popularity already, so they are not lifted twice.
 */
export function geoLift(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { geo } = context;
  if (!geo || !context.config.algorithm.geoLift) return pool;
  for (let i = 0; i < pool.length; i++) {
    if (pool.fill[i] === 0) pool.scores[i] *= geo.lift(pool.ids[i]);
  }
  return pool;
}
