import { LRUCache } from 'lru-cache';
import type { TenantState } from '../state/tenant-state.js';
import { recommendList } from './pipeline.js';
import { projectionKey, projectionMode } from './projection.js';
import type { RecommendationRequest } from './request.js';
import { renderList, withRecommId, type Projection } from './response-body.js';
import { ResultCache, type ResultCacheOptions } from './result-cache.js';

/** Projections by their paths: the same few arrive with every request, and so the same key objects. */
const projections = new LRUCache<string, Projection>({ max: 1000 });

function projectionOf(request: RecommendationRequest): Projection {
  const { returnProperties, includedProperties } = request.projection;
  const text = returnProperties === false ? 'lean' : JSON.stringify(includedProperties ?? null);
  let projection = projections.get(text);
  if (!projection) {
    // Projection errors are the request's, so they come before any work; they are not remembered.
    const mode = projectionMode(request.projection);
    projections.set(text, (projection = { mode, key: projectionKey(mode) }));
  }
  return projection;
}

export const DEFAULT_CACHE: ResultCacheOptions = { maxBytes: 64 * 1024 * 1024, ttlMs: 60_000 };

/** Serves recommendation requests: the cached or freshly ranked list, as the JSON body of the answer. */
export class Recommender {
  private readonly cache: ResultCache;

  constructor(options: ResultCacheOptions = DEFAULT_CACHE) {
    this.cache = new ResultCache(options);
  }

  recommend(tenant: TenantState, request: RecommendationRequest, now = Date.now()): string {
    return withRecommId(this.body(tenant, request, projectionOf(request), now));
  }

  private body(
    tenant: TenantState,
    request: RecommendationRequest,
    projection: Projection,
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
