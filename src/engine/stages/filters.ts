import { compileFilter, joinFilterClauses, type CompiledFilter } from '../../nextql/index.js';
import type { CandidatePool } from '../candidate-pool.js';
import type { FilterRelaxation, PipelineContext } from '../context.js';
import { forEachKept } from '../match-bits.js';

let keptFlags = new Uint8Array(256);

/** Stage 5: the scenario filter and filter rules (one joined filter) remove non-matching items. */
export function filters(
  pool: CandidatePool,
  context: PipelineContext,
  filter: CompiledFilter | undefined,
): CandidatePool {
  if (!filter || pool.length === 0) return pool;
  if (keptFlags.length < pool.length) keptFlags = new Uint8Array(pool.length * 2);
  const flags = keptFlags;
  forEachKept(
    filter,
    context.tenant.catalog,
    pool.idView(),
    context.now,
    (i, kept) => (flags[i] = kept ? 1 : 0),
    context.expressionContext,
  );
  return pool.retain((i) => flags[i] === 1);
}

export interface Gathered {
  pool: CandidatePool;
  relaxation?: FilterRelaxation;
}

/**
 * Runs `gather` with the full filter; when it matches nothing, auto-relax drops clauses from the right
 * while one remains (autoRelaxFilters), then the whole filter (relaxEntireFilterOnEmpty).
 */
export function withFilterRelaxation(
  context: PipelineContext,
  gather: (filter: CompiledFilter | undefined) => CandidatePool,
): Gathered {
  const clauses = context.config.filterClauses;
  const filterOf = (kept: number) =>
    kept === 0 ? undefined : compileFilter(joinFilterClauses(clauses.slice(0, kept)));
  const pool = gather(context.config.filter);
  if (pool.length > 0 || clauses.length === 0) return { pool };

  const originalFilter = joinFilterClauses(clauses);
  const relaxed = (kept: number, relaxedPool: CandidatePool): Gathered => ({
    pool: relaxedPool,
    relaxation: {
      droppedClauses: clauses.slice(kept).reverse(),
      effectiveFilter: kept === 0 ? null : joinFilterClauses(clauses.slice(0, kept)),
      droppedEntireFilter: kept === 0,
      originalFilter,
    },
  });
  if (context.config.autoRelaxFilters) {
    for (let kept = clauses.length - 1; kept >= 1; kept--) {
      const attempt = gather(filterOf(kept));
      if (attempt.length > 0) return relaxed(kept, attempt);
    }
  }
  if (context.config.relaxEntireFilterOnEmpty) return relaxed(0, gather(undefined));
  return { pool };
}
