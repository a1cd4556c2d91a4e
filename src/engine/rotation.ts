import { LRUCache } from 'lru-cache';
import type { TenantState } from '../state/tenant-state.js';
import { assignScenario } from './experiments.js';
import type { RecommendationRequest } from './request.js';

/** docs/guide.md, "Rotation": the window when neither the request nor its scenario sets one. */
export const DEFAULT_ROTATION_TIME_S = 7200;
/** The most the record keeps, in bytes as `entrySize` counts them (docs/memory.md). */
export const ROTATION_RECORD_BYTES = 16 * 1024 * 1024;
/** The returns kept per identity: older ones are dropped first (at 10 a request, 100 requests' worth). */
export const MAX_RETURNS_PER_IDENTITY = 1000;

/** A request's effective rotation: who it is for, the rate (> 0) and the window. */
export interface RotationSettings {
  identity: string;
  rate: number;
  windowMs: number;
}

/** The items a request's identity was returned within the window, each with its score factor. */
export interface RotatedItems {
  itemIds: string[];
  /** `(1 − rate)^k` for an item returned k times; 0 for rate 1. */
  factors: number[];
}

/** What the record keeps per identity: the items returned, oldest first, and when. */
interface Returns {
  itemIds: string[];
  times: number[];
  /** The longest window asked for this identity: returns older than it are of no use. */
  retentionMs: number;
}

/**
 * The request's rotation after its scenario's defaults (the variant's, under a running experiment), or
 * undefined when it is off: rotation applies to user-to-item requests with an identity and a rate > 0.
 */
export function rotationOf(
  tenant: TenantState,
  request: RecommendationRequest,
): RotationSettings | undefined {
  if (request.userId === undefined || request.search) return undefined;
  let scenario = request.scenario === undefined ? undefined : tenant.config.scenarios.get(request.scenario);
  // An unknown scenario is the ranking's 404.
  if (request.scenario !== undefined && scenario === undefined) return undefined;
  if (scenario) scenario = assignScenario(tenant.config, scenario, request.userId).scenario;
  if ((scenario?.logicType ?? request.logicType) !== 'user-to-item') return undefined;
  const rate = request.rotationRate ?? scenario?.rotationRate ?? 0;
  if (!(rate > 0)) return undefined;
  const seconds = request.rotationTime ?? scenario?.rotationTime ?? DEFAULT_ROTATION_TIME_S;
  return { identity: request.userId, rate, windowMs: seconds * 1000 };
}

function entrySize(key: string, returns: Returns): number {
  let size = 200 + key.length * 2;
  for (const id of returns.itemIds) size += 24 + id.length * 2;
  return size;
}

/**
 * What nextrec returned to each identity of requests with rotation on (docs/guide.md, "Rotation"), in
 * memory only: at most ROTATION_RECORD_BYTES (the least recently served identities go first), an
 * identity forgotten once its newest return is older than the longest window asked for it. A restart
 * forgets it all: rotation then starts afresh.
 */
export class RotationRecord {
  private readonly byIdentity: LRUCache<string, Returns>;

  constructor(maxBytes = ROTATION_RECORD_BYTES) {
    this.byIdentity = new LRUCache<string, Returns>({
      maxSize: maxBytes,
      sizeCalculation: (returns, key) => entrySize(key, returns),
      ttlAutopurge: false,
    });
  }

  /** Identities held, stale ones included until `purgeStale`. */
  get size(): number {
    return this.byIdentity.size;
  }

  purgeStale(): void {
    this.byIdentity.purgeStale();
  }

  /** Forgets the returns of deleted users. */
  forget(tenantId: string, userIds: readonly string[]): void {
    for (const userId of userIds) this.byIdentity.delete(keyOf(tenantId, userId));
  }

  /** The items returned to the identity within the window, with their factors; undefined for none. */
  rotated(tenantId: string, settings: RotationSettings, now: number): RotatedItems | undefined {
    const returns = this.byIdentity.get(keyOf(tenantId, settings.identity));
    if (returns === undefined) return undefined;
    const since = now - settings.windowMs;
    const counts = new Map<string, number>();
    const { itemIds, times } = returns;
    // Oldest first: the returns within the window are a suffix.
    for (let i = itemIds.length - 1; i >= 0 && times[i] > since; i--) {
      counts.set(itemIds[i], (counts.get(itemIds[i]) ?? 0) + 1);
    }
    if (counts.size === 0) return undefined;
    const rotated: RotatedItems = { itemIds: [], factors: [] };
    const keep = 1 - settings.rate;
    for (const [itemId, k] of counts) {
      rotated.itemIds.push(itemId);
      rotated.factors.push(keep ** k);
    }
    return rotated;
  }

  /** Records that the identity was returned these items now. */
  record(tenantId: string, settings: RotationSettings, itemIds: readonly string[], now: number): void {
    if (itemIds.length === 0) return;
    const key = keyOf(tenantId, settings.identity);
    const returns = this.byIdentity.get(key) ?? { itemIds: [], times: [], retentionMs: 0 };
    returns.retentionMs = Math.max(returns.retentionMs, settings.windowMs);
    for (const itemId of itemIds) {
      returns.itemIds.push(itemId);
      returns.times.push(now);
    }
    let drop = Math.max(0, returns.itemIds.length - MAX_RETURNS_PER_IDENTITY);
    const since = now - returns.retentionMs;
    while (drop < returns.times.length && returns.times[drop] <= since) drop++;
    if (drop > 0) {
      returns.itemIds.splice(0, drop);
      returns.times.splice(0, drop);
    }
    // Set again so that its size and its time to live are those of now.
    this.byIdentity.set(key, returns, { ttl: Math.ceil(returns.retentionMs) });
  }
}

function keyOf(tenantId: string, identity: string): string {
  return `${tenantId}\u0000${identity}`;
}
