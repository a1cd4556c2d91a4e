import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/** Stage 3: items not in the catalog (known only from events) or with available=false are dropped. */
export function availability(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { catalog } = context.tenant;
  return pool.retain((i) => catalog.inCatalog[pool.ids[i]] === 1 && catalog.available[pool.ids[i]]);
}
