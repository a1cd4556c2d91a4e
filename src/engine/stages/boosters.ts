import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/** Stage 6: each matching booster multiplies the (already lifted) score; boosters stack. */
export function boosters(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const options = { now: context.now };
  for (const booster of context.config.boosters) {
    booster.applyToScores(context.tenant.catalog, pool.idView(), pool.scores, options);
  }
  return pool;
}
