import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { normalizeCountry } from '../geo/countries.js';
import type { AnswerSummary } from './answer-summary.js';
import type { TenantState } from '../state/tenant-state.js';
import { MAX_STALENESS_MS } from './counts-derived.js';
import { userContextKey } from './expression-context.js';
import type { RecommendationRequest } from './request.js';

export interface CacheStamp {
  createdAt: number;
  geoVersion: number;
  catalogVersion: number;
  configVersion: number;
  /** The tenant's settings and models objects, by `identityNumber`. */
  settings: number;
  neighbours: number;
  vectorsVersion: number;
  identity?: string;
  historyVersion: number;
}

export interface CachedAnswer {
  /** The rendered answer, without its recommId. */
  body: string;
  /** What the record of answers and the pages keep of it, as ranking said it. */
  summary: Required<AnswerSummary>;
}

type Entry = CacheStamp & CachedAnswer;

export interface ResultCacheOptions {
  maxBytes: number;
  ttlMs: number;
}

/**
 * What a summary adds to an entry: its objects, its item ids (two bytes a character at most, should the
 * catalog no longer hold the same texts) and its dense ids.
 */
function summarySize(summary: AnswerSummary): number {
  let size = 160;
  for (const id of summary.itemIds) size += 40 + id.length * 2;
  return size;
}

/** Numbers given to objects, each once (see `identityNumber`). */
const identityNumbers = new WeakMap<object, number>();
let lastIdentityNumber = 0;

/**
 * A number for `object` alone, the same each time: an entry records the settings and the models it was
 * ranked with by number, never by reference. By reference, each stale entry kept the models of its time
 * alive until the cache evicted it (its size counts only answers' text): under bench/soak's mix, with
 * co-occurrence rebuilt every few seconds, 216 versions in 75 s (docs/memory.md).
 */
function identityNumber(object: object): number {
  let number = identityNumbers.get(object);
  if (number === undefined) identityNumbers.set(object, (number = ++lastIdentityNumber));
  return number;
}

/**
 * Answers by request (spec "Caching"): the key has the country segment (the ISO code or `_global_`, none
 * for recently-viewed) and, when the request overrides anything, a hash of the overrides; also the
 * projection, since an entry is the rendered answer. An entry is stale once the tenant's catalog,
 * configuration or model changed, or the requesting user's history; other users' events (geo counters,
 * popularity) make it stale only after MAX_STALENESS_MS.
 */
export class ResultCache {
  private readonly lru: LRUCache<string, Entry>;
  /** Lookups answered and not answered, since the start (metrics). */
  hits = 0;
  misses = 0;

  constructor(options: ResultCacheOptions) {
    this.lru = new LRUCache<string, Entry>({
      maxSize: options.maxBytes,
      ttl: options.ttlMs,
      // Two bytes per character: the most a string takes; a summary's item ids besides the answer.
      sizeCalculation: (entry, key) =>
        256 + (key.length + entry.body.length) * 2 + summarySize(entry.summary),
    });
  }

  /** Entries held, stale ones included until `purgeStale`. */
  get size(): number {
    return this.lru.size;
  }

  /**
   * Drops the entries older than the TTL. lru-cache drops a stale entry only when it is asked for or
   * evicted: without this, the cache fills to its bound with answers no one may be served again, which
   * under bench/soak's mix took 20 minutes and tens of megabytes (docs/memory.md).
   */
  purgeStale(): void {
    this.lru.purgeStale();
  }

  key(tenant: TenantState, request: RecommendationRequest, projection: string): string {
    const logic = request.scenario ? `s:${request.scenario}` : `l:${request.logicType}`;
    const logicType = request.scenario
      ? tenant.config.scenarios.get(request.scenario)?.logicType
      : request.logicType;
    const recentlyViewed = logicType === 'recently-viewed';
    const country = recentlyViewed ? '' : (normalizeCountry(request.country) ?? '_global_');
    const overrides = Object.keys(request.overrides).length
      ? createHash('sha1').update(JSON.stringify(request.overrides)).digest('base64url')
      : '';
    const seeds = JSON.stringify([
      request.userId ?? null,
      request.itemId ?? null,
      request.itemIds ?? null,
      request.search?.query ?? null,
    ]);
    // The seed item's keys that context_item() reads change only with the catalog, which makes entries
    // stale; the user's document does not, so a request that carries it is keyed by it.
    const user = userContextKey(request);
    return `${tenant.tenantId}\u0000${logic}\u0000${seeds}\u0000${request.count ?? ''}\u0000${projection}\u0000${country}\u0000${overrides}${user && `\u0000${user}`}`;
  }

  get(key: string, tenant: TenantState, now: number): string | undefined {
    return this.lookup(key, tenant, now)?.body;
  }

  /** The fresh entry of `key`, the answer's summary with it. */
  lookup(key: string, tenant: TenantState, now: number): CachedAnswer | undefined {
    // Events leave the geo window with time alone; ranking drops them as it reads the counters, but
    // ranking may run elsewhere (WorkerRanker), and a stream of cache hits ranks nothing. Before the
    // lookup, so that the stamp of a miss (taken next) is as current as the check of a hit.
    tenant.geoCounts.advance(now);
    const entry = this.lru.get(key);
    if (!entry) {
      this.misses++;
      return undefined;
    }
    const history = entry.identity === undefined ? undefined : tenant.histories.get(entry.identity);
    const fresh =
      entry.catalogVersion === tenant.catalog.version &&
      entry.configVersion === tenant.config.version &&
      entry.settings === identityNumber(tenant.settings) &&
      entry.neighbours === identityNumber(tenant.neighbours) &&
      entry.vectorsVersion === tenant.vectors.version &&
      entry.historyVersion === (history?.version ?? 0) &&
      (entry.geoVersion === tenant.geoCounts.version || now - entry.createdAt < MAX_STALENESS_MS);
    if (fresh) {
      this.hits++;
      return entry;
    }
    this.misses++;
    this.lru.delete(key);
    return undefined;
  }

  /** What an entry of a list ranked from the tenant's current state must record to tell it is stale. */
  stamp(tenant: TenantState, identity: string | undefined, now: number): CacheStamp {
    return {
      createdAt: now,
      geoVersion: tenant.geoCounts.version,
      catalogVersion: tenant.catalog.version,
      configVersion: tenant.config.version,
      settings: identityNumber(tenant.settings),
      neighbours: identityNumber(tenant.neighbours),
      vectorsVersion: tenant.vectors.version,
      identity,
      historyVersion: identity === undefined ? 0 : (tenant.histories.get(identity)?.version ?? 0),
    };
  }

  /** Drops every answer of the tenant (items were deleted: their ids are in the bodies). */
  forgetTenant(tenantId: string): void {
    const prefix = `${tenantId}\u0000`;
    for (const key of [...this.lru.keys()]) if (key.startsWith(prefix)) this.lru.delete(key);
  }

  /** Drops every answer asked for one of these user ids (a deleted user's). */
  forget(tenantId: string, userIds: readonly string[]): void {
    const prefix = `${tenantId}\u0000`;
    const forgotten = new Set(userIds);
    for (const key of [...this.lru.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const [userId] = JSON.parse(key.split('\u0000')[2]) as [string | null];
      if (userId !== null && forgotten.has(userId)) this.lru.delete(key);
    }
  }

  set(key: string, stamp: CacheStamp, body: string, summary: Required<AnswerSummary>): void {
    this.lru.set(key, Object.assign({}, stamp, { body, summary } satisfies CachedAnswer));
  }
}
