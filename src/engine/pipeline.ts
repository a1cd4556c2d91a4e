import type { CompiledFilter } from '../nextql/index.js';
import type { TenantState } from '../state/tenant-state.js';
import { requestPools, type CandidatePool } from './candidate-pool.js';
import type { RecommendationRequest } from './request.js';
import { availability } from './stages/availability.js';
import { boosters } from './stages/boosters.js';
import { candidates, type CandidateSource } from './stages/candidates.js';
import { constraints } from './stages/constraints.js';
import { filters, withFilterRelaxation } from './stages/filters.js';
import { geoLift } from './stages/geo-lift.js';
import { minMax } from './stages/min-max.js';
import { applyPurchaseCap } from './stages/purchase-cap.js';
import { resolve } from './stages/resolve.js';
import { rotation } from './stages/rotation.js';
import { segments } from './stages/segments.js';
import type { PipelineContext, RankedList } from './context.js';

export type { RankedList } from './context.js';

/**
 * Stages 3-6 over the candidate sequence until the pool holds poolSize survivors (or the sequence ends):
 * a selective filter reaches further down the popularity fill instead of returning a short list.
 */
function gather(
  source: CandidateSource,
  context: PipelineContext,
  filter: CompiledFilter | undefined,
): CandidatePool {
  source.restart();
  const rotated = rotation(context);
  // Steps may overshoot the pool size a little; room for that avoids growing the arrays.
  const pool = requestPools.take(context.poolSize * 2);
  let step = context.poolSize;
  while (pool.length < context.poolSize) {
    const batch = source.next(step);
    const taken = batch.length;
    if (taken === 0) break;
    availability(batch, context);
    geoLift(batch, context);
    filters(batch, context, filter);
    // The next step is sized by how many candidates survived this one, so a filter that rejects much
    // reaches further at once and one that keeps most does not overshoot the pool size.
    const survival = Math.max(batch.length / taken, 1 / 64);
    // After the survival: the items rotation moves aside are few (RotatedItems), not a share to expect.
    rotated.apply(batch);
    pool.append(batch);
    step = Math.ceil((context.poolSize - pool.length) / survival) + 8;
  }
  rotated.finish(pool);
  return boosters(pool, context);
}

/**
 * The first `length` values, as a plain array: a list is a few entries, where a typed array costs an
 * allocation outside the heap (and `Array.from` a call per entry).
 */
function plainArray(values: ArrayLike<number>, length: number): number[] {
  const array: number[] = [];
  for (let i = 0; i < length; i++) array.push(values[i]);
  return array;
}

/** The spec's pipeline, stage by stage, for one request. */
export function recommendList(tenant: TenantState, request: RecommendationRequest, now: number): RankedList {
  return recommendResolved(startRequest(tenant, request, now));
}

/** Stage 1 of a new request; the candidate pools of the request before are reused from here on. */
export function startRequest(
  tenant: TenantState,
  request: RecommendationRequest,
  now: number,
): PipelineContext {
  requestPools.recycle();
  return resolve(tenant, request, now); // 1
}

/** Stages 2-10 of a request that stage 1 resolved. */
export function recommendResolved(context: PipelineContext): RankedList {
  const source = candidates(context); // 2
  const { pool, relaxation } = withFilterRelaxation(context, (filter) => gather(source, context, filter)); // 3-6
  const list = minMax(pool, context, (ranked, round) => {
    constraints(ranked, context, round); // 7
    segments(ranked, context); // 8
    return applyPurchaseCap(ranked, context); // 9
  }); // 10
  const { algorithm, scenario } = context.config;
  return {
    ids: plainArray(list.ids, list.length),
    scores: algorithm.scored ? plainArray(list.scores, list.length) : undefined,
    algorithm: algorithm.name,
    scenario: scenario?.slug,
    experiment: context.assignment,
    filterRelaxation: relaxation,
  };
}
