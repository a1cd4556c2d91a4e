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

  recommend(tenant: TenantState, request: RecommendationRequest, now = Date.now()): string {
    // Projection errors are the request's, so they come before any work.
    return withRecommId(this.body(tenant, request, resolveProjection(request.projection), now));
  }

  private body(
    tenant: TenantState,
    request: RecommendationRequest,
    projection: ResolvedProjection,
    now: number,
  ): string {
    const rendered = () => renderList(tenant.catalog, recommendList(tenant, request, now), projection);
    if (request.noCache) return rendered();
    const key = this.cache.key(tenant, request, projection.key);
    const cached = this.cache.get(key, tenant, now);
    if (cached !== undefined) return cached;
    const body = rendered();
    this.cache.set(key, tenant, request.userId, body, now);
    return body;
  }
}
