import { SERVABLE } from '../../state/item-catalog.js';
import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/** The dense ids of a request's excluded items, by request context: read once, used by each step. */
const excludedIds = new WeakMap<PipelineContext, Set<number>>();

function excludedOf(context: PipelineContext, exclude: readonly string[]): Set<number> {
  let ids = excludedIds.get(context);
  if (ids === undefined) {
    const { catalog } = context.tenant;
    ids = new Set();
    for (const externalId of exclude) {
      const id = catalog.idOf(externalId);
      if (id >= 0) ids.add(id);
    }
    excludedIds.set(context, ids);
  }
  return ids;
}

/**
 * Stage 3: items not in the catalog (known only from events) or with available=false are dropped, and
 * the items the request excludes (a next page's earlier pages: docs/guide.md, "The next page").
 */
export function availability(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { rankingCodes } = context.tenant.catalog;
  const { exclude } = context.request;
  if (exclude === undefined || exclude.length === 0)
    return pool.retain((i) => (rankingCodes[pool.ids[i]] & SERVABLE) !== 0);
  const excluded = excludedOf(context, exclude);
  return pool.retain((i) => (rankingCodes[pool.ids[i]] & SERVABLE) !== 0 && !excluded.has(pool.ids[i]));
}
