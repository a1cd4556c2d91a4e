import { randomUUID } from 'node:crypto';
import type { TenantState } from '../state/tenant-state.js';
import type { FilterRelaxation } from './context.js';
import { recommendList, type RankedList } from './pipeline.js';
import { projectItem, projectionMode } from './projection.js';
import type { RecommendationRequest } from './request.js';
import { ResultCache, type ResultCacheOptions } from './result-cache.js';

export interface RecommendationResponse {
  items: Record<string, unknown>[];
  count: number;
  algorithm: string;
  scenario?: string;
  filterRelaxation?: FilterRelaxation;
  recommId: string;
}

export const DEFAULT_CACHE: ResultCacheOptions = { maxBytes: 64 * 1024 * 1024, ttlMs: 60_000 };

/** Serves recommendation requests: the cached or freshly ranked list, projected as the request asks. */
export class Recommender {
  private readonly cache: ResultCache;

  constructor(options: ResultCacheOptions = DEFAULT_CACHE) {
    this.cache = new ResultCache(options);
  }

  recommend(tenant: TenantState, request: RecommendationRequest, now = Date.now()): RecommendationResponse {
    // Projection errors are the request's, so they come before any work.
    const mode = projectionMode(request.projection);
    const list = this.rankedList(tenant, request, now);
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < list.ids.length; i++) {
      const document = tenant.catalog.rawDocument(list.ids[i]);
      if (document) items.push(projectItem(document, list.scores?.[i], mode));
    }
    return {
      items,
      count: items.length,
      algorithm: list.algorithm,
      ...(list.scenario !== undefined && { scenario: list.scenario }),
      ...(list.filterRelaxation && { filterRelaxation: list.filterRelaxation }),
      recommId: randomUUID(),
    };
  }

  private rankedList(tenant: TenantState, request: RecommendationRequest, now: number): RankedList {
    if (request.noCache) return recommendList(tenant, request, now);
    const key = this.cache.key(tenant, request);
    const cached = this.cache.get(key, tenant, now);
    if (cached) return cached;
    const list = recommendList(tenant, request, now);
    this.cache.set(key, tenant, request.userId, list, now);
    return list;
  }
}
