import { ApiError } from '../contract/errors.js';
import type { TenantState } from '../state/tenant-state.js';
import type { AnswerSummary } from './answer-summary.js';
import { attachUserContext } from './expression-context.js';
import { resolveProjection, type ResolvedProjection } from './projection.js';
import { newRecommId } from './recomm-id.js';
import type { RankedAnswer, Ranker } from './ranker.js';
import type { Page, RecommPages } from './recomm-pages.js';
import { rotationOf, RotationRecord, type RotationSettings } from './rotation.js';
import type { RecommendationRequest } from './request.js';
import { withRecommId } from './response-body.js';
import { ResultCache, type ResultCacheOptions } from './result-cache.js';

export const DEFAULT_CACHE: ResultCacheOptions = { maxBytes: 64 * 1024 * 1024, ttlMs: 60_000 };
/** The cache of an unrecorded recommender (the daemon's warm-up): enough for its few seeds. */
const UNRECORDED_CACHE: ResultCacheOptions = { maxBytes: 4 * 1024 * 1024, ttlMs: 60_000 };

/** Where the answers given are recorded (analytics' AnswerLog). */
export interface AnswerRecorder {
  record(tenantId: string, userId: string | undefined, answer: AnswerSummary): void;
}

/** The external ids of dense ids, those of deleted items left out. */
function externalIds(tenant: TenantState, ids: ArrayLike<number>): string[] {
  const externalIds: string[] = [];
  for (let i = 0; i < ids.length; i++) {
    const externalId = tenant.catalog.externalIds[ids[i]];
    if (externalId) externalIds.push(externalId);
  }
  return externalIds;
}

/** A summary with its items' dense ids, as ranking said them. */
type RankedSummary = Required<AnswerSummary>;

/**
 * What the record and the pages keep of a ranked answer: its items' external ids are the catalog's own
 * texts, not read again from the answer's; an item deleted since it was ranked is left out.
 */
function summaryOf(
  tenant: TenantState,
  { items, algorithm, scenario, experiment }: RankedAnswer,
): RankedSummary {
  const ids = items.filter((id) => tenant.catalog.externalIds[id]);
  return { itemIds: externalIds(tenant, ids), ids, algorithm, scenario, experiment };
}

/** The dense ids of known items: an item deleted since it was answered is gone for good. */
function denseIds(tenant: TenantState, itemIds: readonly string[] | undefined): number[] {
  const ids: number[] = [];
  for (const itemId of itemIds ?? []) {
    const id = tenant.catalog.idOf(itemId);
    if (id >= 0) ids.push(id);
  }
  return ids;
}

/**
 * The page of an answer whose items are `shown` (dense ids): after `page` when it is one (its chain's
 * first request then stands for it), else of its own request.
 */
function pageOf(tenant: TenantState, request: RecommendationRequest, shown: number[], page?: Page): Page {
  if (page)
    return { request: page.request, excluded: page.excluded, shown: [...Array.from(page.shown), ...shown] };
  return { request, excluded: denseIds(tenant, request.exclude), shown };
}

/** Serves recommendation requests: the cached or freshly ranked list, as the JSON body of the answer. */
export class Recommender {
  private readonly cache: ResultCache;
  /** What rotation requests were answered, by identity (docs/guide.md, "Rotation"). */
  private readonly rotation = new RotationRecord();

  constructor(
    private readonly ranker: Ranker,
    options: ResultCacheOptions = DEFAULT_CACHE,
    private readonly answers?: AnswerRecorder,
    /** Where answers are kept to be paged (`next`); none: no answer may be. */
    private readonly pages?: RecommPages,
  ) {
    this.cache = new ResultCache(options);
  }

  /**
   * A recommender over the same ranker, with a result cache of its own and no record of answers: it
   * runs the code of this one and leaves nothing of it behind (the daemon's warm-up, docs/configuration.md, "Health and metrics").
   */
  unrecorded(): Recommender {
    return new Recommender(this.ranker, UNRECORDED_CACHE);
  }

  /** The result cache's lookups answered and not answered, since the start. */
  cacheStats(): { hits: number; misses: number } {
    return { hits: this.cache.hits, misses: this.cache.misses };
  }

  /** The pages kept for `next` (docs/memory.md, "Pages of answers"): how many, and the bytes they take. */
  pagesHeld(): { entries: number; bytes: number } {
    return { entries: this.pages?.size ?? 0, bytes: this.pages?.bytes ?? 0 };
  }

  /**
   * Drops the cached answers, pages and rotation records older than their TTLs (the daemon calls it
   * every few seconds).
   */
  purgeStale(): void {
    this.cache.purgeStale();
    this.pages?.purgeStale();
    this.rotation.purgeStale();
  }

  /** Forgets the cached answers and the pages of deleted users, and what rotation recorded of them. */
  forget(tenantId: string, userIds: readonly string[]): void {
    this.cache.forget(tenantId, userIds);
    this.pages?.forget(tenantId, userIds);
    this.rotation.forget(tenantId, userIds);
  }

  /**
   * Forgets the tenant's cached answers, which may name deleted items; pages skip them as they skip
   * unavailable items (docs/guide.md, "Deleting items").
   */
  forgetItems(tenantId: string): void {
    this.cache.forgetTenant(tenantId);
  }

  /**
   * Calls `done` with the answer, or with the request's error: at once when the cache has the answer,
   * else when the ranker has ranked it. Projection errors come first and are thrown.
   */
  recommend(
    tenant: TenantState,
    request: RecommendationRequest,
    done: (answer: string | Error) => void,
    now = Date.now(),
  ): void {
    const projection = resolveProjection(request.projection);
    attachUserContext(tenant, request);
    const rotation = rotationOf(tenant, request);
    // Each answer of a request with rotation changes what the next one may show: a cached answer could
    // show items rotation now demotes, so such requests are always ranked and their answers never cached.
    // A request that excludes items is answered for its own context (docs/guide.md, "The next page").
    if (request.noCache || rotation || request.exclude !== undefined) {
      if (rotation) request.rotated = this.rotation.rotated(tenant, rotation, now);
      return this.ranked(tenant, request, projection, done, now, undefined, rotation);
    }
    const key = this.cache.key(tenant, request, projection.key);
    const cached = this.cache.lookup(key, tenant, now);
    if (cached !== undefined) return done(this.answered(tenant, request, cached.body, cached.summary));
    // The state as the ranker sees it: it may change before the list comes back.
    const stamp = this.cache.stamp(tenant, request.userId, now);
    this.ranker.rank(tenant, request, projection, now, (outcome) => {
      if (outcome instanceof Error) return done(outcome);
      const summary = summaryOf(tenant, outcome);
      this.cache.set(key, stamp, outcome.body, summary);
      done(this.answered(tenant, request, outcome.body, summary));
    });
  }

  /**
   * Calls `done` with the next page of a tenant's recommId (docs/guide.md, "The next page"): its request
   * ranked again without the items shown so far in its chain (nor `exclude`), never from the cache.
   * Throws RECOMM_NOT_FOUND for a recommId this recommender does not keep for the tenant.
   */
  next(
    tenant: TenantState,
    recommId: string,
    count: number,
    done: (answer: string | Error) => void,
    exclude: readonly string[] = [],
    now = Date.now(),
  ): void {
    const page = this.pages?.get(tenant.tenantId, recommId);
    if (page === undefined)
      throw new ApiError(
        'RECOMM_NOT_FOUND',
        `no answer '${recommId}' to page: unknown, over 30 minutes old, or forgotten since`,
      );
    const excluded = [...externalIds(tenant, page.excluded), ...externalIds(tenant, page.shown), ...exclude];
    const request = Object.assign({}, page.request, { count, exclude: excluded });
    this.ranked(tenant, request, resolveProjection(request.projection), done, now, page);
  }

  /**
   * Ranks a request the cache must not answer; `page`: the page it follows; `rotation`: its rotation,
   * which records the answer.
   */
  private ranked(
    tenant: TenantState,
    request: RecommendationRequest,
    projection: ResolvedProjection,
    done: (answer: string | Error) => void,
    now: number,
    page?: Page,
    rotation?: RotationSettings,
  ): void {
    this.ranker.rank(tenant, request, projection, now, (outcome) =>
      done(
        outcome instanceof Error
          ? outcome
          : this.answered(tenant, request, outcome.body, summaryOf(tenant, outcome), page, rotation, now),
      ),
    );
  }

  /**
   * The answer with a recommId of its own (naming its algorithm), recorded, for rotation too, and kept
   * to be paged: as a page after `page` when it is one (its chain's first request then stands for it).
   */
  private answered(
    tenant: TenantState,
    request: RecommendationRequest,
    body: string,
    summary: RankedSummary,
    page?: Page,
    rotation?: RotationSettings,
    now = Date.now(),
  ): string {
    const recommId = newRecommId(summary.algorithm);
    this.answers?.record(tenant.tenantId, request.userId, summary);
    if (rotation) this.rotation.record(tenant, rotation, summary.itemIds, now);
    if (this.pages)
      this.pages.remember(tenant.tenantId, recommId, pageOf(tenant, request, summary.ids, page));
    return withRecommId(body, recommId);
  }
}
