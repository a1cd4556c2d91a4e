import { SERVABLE } from '../../state/item-catalog.js';
import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/**
 * Stage 3: items not in the catalog (known only from events) or with available=false are dropped, and
 * the items the request excludes (a next page's earlier pages: docs/guide.md, "The next page").
 */
export function availability(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { rankingCodes } = context.tenant.catalog;
  const { excluded } = context;
  if (excluded === undefined) return pool.retain((i) => (rankingCodes[pool.ids[i]] & SERVABLE) !== 0);
  return pool.retain((i) => (rankingCodes[pool.ids[i]] & SERVABLE) !== 0 && !excluded.has(pool.ids[i]));
}
