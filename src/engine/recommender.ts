import type { TenantState } from '../state/tenant-state.js';
import { recommendList } from './pipeline.js';
import { resolveProjection, type ResolvedProjection } from './projection.js';
import type { RecommendationRequest } from './request.js';
import { renderList, withRecommId } from './response-body.js';
import { ResultCache, type ResultCacheOptions } from './result-cache.js';

export const DEFAULT_CACHE: ResultCacheOptions = { maxBytes: 64 * 1024 * 1024, ttlMs: 60_000 };

/** Serves recommendation requests: the cached or freshly ranked list, as the JSON body of the answer. */
export class Recommender {
  private readonly cache: ResultCache;

  constructor(options: ResultCacheOptions = DEFAULT_CACHE) {
    this.cache = new ResultCache(options);
  }

  recommend(tenant: TenantState, request: RecommendationRequest, now = Date.now()): Buffer {
    const answer = this.plan(tenant, request, now);
    return Buffer.isBuffer(answer) ? answer : answer();
  }

  /**
   * The answer when the cache has it; otherwise the work that ranks, renders and caches it, so that a
   * server can run the ranking of many requests back to back (see TurnQueue). Errors of the request
   * itself (projection, unknown scenario or seed) are thrown here or by that work.
   */
  plan(tenant: TenantState, request: RecommendationRequest, now = Date.now()): Buffer | (() => Buffer) {
    // Projection errors are the request's, so they come before any work.
    const projection = resolveProjection(request.projection);
    if (request.noCache) return () => withRecommId(rankedBody(tenant, request, projection, now));
    const key = this.cache.key(tenant, request, projection.key);
    const cached = this.cache.get(key, tenant, now);
    if (cached !== undefined) return withRecommId(cached);
    return () => {
      const body = rankedBody(tenant, request, projection, now);
      this.cache.set(key, tenant, request.userId, body, now);
      return withRecommId(body);
    };
  }
}

/** The request's list, ranked and rendered, encoded; without its recommId. */
function rankedBody(
  tenant: TenantState,
  request: RecommendationRequest,
  projection: ResolvedProjection,
  now: number,
): Buffer {
  return Buffer.from(renderList(tenant.catalog, recommendList(tenant, request, now), projection));
}
