import { LRUCache } from 'lru-cache';
import type { RecommendationRequest } from './request.js';

/**
 * What a recommId may be paged from (docs/guide.md, "The next page"): the request that made its answer, as
 * the route read it, and every item of that answer and of the pages before it.
 */
export interface Page {
  readonly request: RecommendationRequest;
  /** External ids of the items shown so far in the chain, this answer's included. */
  readonly shown: readonly string[];
}

export interface RecommPagesOptions {
  maxBytes: number;
  ttlMs: number;
  /** The clock of the TTL, in milliseconds (default: `performance.now`). */
  now?: () => number;
}

/** 30 minutes of paging (CONTRACT "Next page"), in at most 64 MiB (docs/memory.md). */
export const DEFAULT_PAGES: RecommPagesOptions = { maxBytes: 64 * 1024 * 1024, ttlMs: 30 * 60_000 };

/** The entry's object, its request's objects, the key and the cache's own bookkeeping. */
const ENTRY_OVERHEAD = 512;
/** What a string adds besides its characters (two bytes each at most), or a slot of an array. */
const STRING_OVERHEAD = 32;

function stringsSize(values: readonly string[] | null | undefined): number {
  if (!values) return 0;
  let size = 0;
  for (const value of values) size += STRING_OVERHEAD + value.length * 2;
  return size;
}

function stringSize(value: string | null | undefined): number {
  return value ? STRING_OVERHEAD + value.length * 2 : 0;
}

/** What an object or an array of a document adds besides its entries. */
const OBJECT_OVERHEAD = 64;

/**
 * An upper estimate of a JSON document (the user's document a request carries for context_user()): each
 * string as above, each key a string, each other value a slot, each object and array OBJECT_OVERHEAD.
 */
function documentSize(document: unknown): number {
  let size = 0;
  const pending: unknown[] = [document];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') size += STRING_OVERHEAD + value.length * 2;
    else if (value === null || typeof value !== 'object') size += STRING_OVERHEAD;
    else if (Array.isArray(value)) {
      size += OBJECT_OVERHEAD;
      for (const entry of value as unknown[]) pending.push(entry);
    } else {
      size += OBJECT_OVERHEAD;
      for (const [key, entry] of Object.entries(value)) {
        size += STRING_OVERHEAD + key.length * 2;
        pending.push(entry);
      }
    }
  }
  return size;
}

/** An upper estimate of what a page's request and items take, without serializing them. */
function pageSize(page: Page): number {
  const { request } = page;
  const { overrides } = request;
  return (
    ENTRY_OVERHEAD +
    stringSize(request.scenario) +
    stringSize(request.userId) +
    stringSize(request.itemId) +
    stringsSize(request.itemIds) +
    stringSize(request.country) +
    stringSize(overrides.filter) +
    stringsSize(overrides.boosters) +
    stringsSize(overrides.rulesSlugs) +
    stringSize(overrides.segmentationId) +
    stringsSize(request.projection.includedProperties) +
    stringSize(request.search?.query) +
    stringSize(request.search?.filter) +
    stringSize(request.search?.semanticText) +
    (request.search?.vector?.byteLength ?? 0) +
    stringsSize(request.exclude) +
    (request.rotated ? request.rotated.ids.byteLength + request.rotated.factors.byteLength : 0) +
    (request.userContext ? documentSize(request.userContext) : 0) +
    stringsSize(page.shown)
  );
}

/**
 * The pages of the answers given, by tenant and recommId, for `POST /recommendations/next`: an entry
 * expires 30 minutes after its answer, and the least recently stored go first when the store reaches its
 * bound. Kept in the process: paging does not survive a restart.
 */
export class RecommPages {
  private readonly lru: LRUCache<string, Page>;

  constructor(options: RecommPagesOptions = DEFAULT_PAGES) {
    this.lru = new LRUCache<string, Page>({
      maxSize: options.maxBytes,
      ttl: options.ttlMs,
      // A clock of its own is read at every check (lru-cache otherwise reads its clock once a millisecond).
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
      sizeCalculation: (page, key) => pageSize(page) + key.length * 2,
    });
  }

  /** Entries held, stale ones included until `purgeStale`. */
  get size(): number {
    return this.lru.size;
  }

  /** Remembers an answer's page; `shownBefore` are the items of the pages before it in its chain. */
  remember(
    tenantId: string,
    recommId: string,
    request: RecommendationRequest,
    itemIds: readonly string[],
    shownBefore?: readonly string[],
  ): void {
    const shown = shownBefore === undefined ? itemIds : [...shownBefore, ...itemIds];
    this.lru.set(`${tenantId}\u0000${recommId}`, { request, shown });
  }

  /** The page of a tenant's recommId, while it may be paged. */
  get(tenantId: string, recommId: string): Page | undefined {
    return this.lru.get(`${tenantId}\u0000${recommId}`);
  }

  /** Drops the entries older than the TTL (the daemon calls it every few seconds: docs/memory.md). */
  purgeStale(): void {
    this.lru.purgeStale();
  }

  /** Forgets the pages of deleted users' requests. */
  forget(tenantId: string, userIds: readonly string[]): void {
    const prefix = `${tenantId}\u0000`;
    const forgotten = new Set(userIds);
    for (const [key, page] of this.lru.entries()) {
      if (key.startsWith(prefix) && page.request.userId !== undefined && forgotten.has(page.request.userId))
        this.lru.delete(key);
    }
  }
}
