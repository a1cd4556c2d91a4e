import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { applyBooster } from '../match-bits.js';

/** Stage 6: each matching booster multiplies the (already lifted) score; boosters stack. */
export function boosters(pool: CandidatePool, context: PipelineContext): CandidatePool {
  for (const booster of context.config.boosters) {
    applyBooster(booster, context.tenant.catalog, pool.idView(), pool.scores, context.now);
  }
  return pool;
}
