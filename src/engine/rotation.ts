import { LRUCache } from 'lru-cache';
import { configDerived, type ConfigSlot, type TenantConfig } from '../state/tenant-config.js';
import type { TenantState } from '../state/tenant-state.js';
import { assignScenario } from './experiments.js';
import type { RecommendationRequest, RotatedItems } from './request.js';

/** docs/guide.md, "Rotation": the window when neither the request nor its scenario sets one. */
export const DEFAULT_ROTATION_TIME_S = 7200;
/** The most the record keeps, in bytes as IDENTITY_BYTES and RETURN_BYTES count them (docs/memory.md). */
export const ROTATION_RECORD_BYTES = 16 * 1024 * 1024;
/** The returns kept per identity: older ones are dropped first (at 10 a request, 50 requests' worth). */
export const MAX_RETURNS_PER_IDENTITY = 500;

/** A request's effective rotation: who it is for, the rate (> 0) and the window. */
export interface RotationSettings {
  identity: string;
  rate: number;
  windowMs: number;
}

/**
 * What the record keeps per identity: the items returned (by the catalog's dense ids, so that counting
 * them is indexing an array rather than hashing their text), oldest first from `head`, and when; entries
 * before `head` are dropped ones, compacted away once they are half the arrays.
 */
interface Returns {
  ids: number[];
  times: number[];
  head: number;
  /** The longest window asked for this identity: returns older than it are of no use. */
  retentionMs: number;
  /** RETURN_BYTES per return kept, up to date so that setting the entry again costs nothing more. */
  bytes: number;
}

/** An identity's entry (its key, object and arrays), and each return kept (its id and its time). */
const IDENTITY_BYTES = 200;
const RETURN_BYTES = 16;

/** Returns per dense id of the identity being counted; zeroed again through the ids it touched. */
let counts = new Uint16Array(1024);

/** Whether some scenario of the configuration sets a rotation rate, by configuration version. */
const rotatingConfigs: ConfigSlot<boolean> = new WeakMap();

function scenariosRotate(config: TenantConfig): boolean {
  return [...config.scenarios.values()].some((scenario) => (scenario.rotationRate ?? 0) > 0);
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
  // Most requests neither ask for rotation nor have a scenario that does: no experiment assignment then.
  if ((request.rotationRate ?? 0) === 0 && !configDerived(tenant.config, rotatingConfigs, scenariosRotate))
    return undefined;
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
      sizeCalculation: (returns, key) => IDENTITY_BYTES + key.length * 2 + returns.bytes,
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
  rotated(tenant: TenantState, settings: RotationSettings, now: number): RotatedItems | undefined {
    const returns = this.byIdentity.get(keyOf(tenant.tenantId, settings.identity));
    if (returns === undefined) return undefined;
    const { catalog } = tenant;
    if (counts.length < catalog.size) counts = new Uint16Array(catalog.size * 2);
    const since = now - settings.windowMs;
    const { ids, times, head } = returns;
    const touched: number[] = [];
    // Oldest first: the returns within the window are a suffix.
    for (let i = ids.length - 1; i >= head && times[i] > since; i--) {
      // An id beyond the catalog (a state rebuilt since) counts for nothing.
      if (ids[i] < catalog.size && counts[ids[i]]++ === 0) touched.push(ids[i]);
    }
    if (touched.length === 0) return undefined;
    const rotated: RotatedItems = {
      ids: Int32Array.from(touched),
      factors: new Float64Array(touched.length),
    };
    const keep = 1 - settings.rate;
    for (let i = 0; i < touched.length; i++) {
      rotated.factors[i] = keep ** counts[touched[i]];
      counts[touched[i]] = 0;
    }
    return rotated;
  }

  /** Records that the identity was returned these items now (items the catalog lacks are left out). */
  record(tenant: TenantState, settings: RotationSettings, itemIds: readonly string[], now: number): void {
    if (itemIds.length === 0) return;
    const key = keyOf(tenant.tenantId, settings.identity);
    const returns = this.byIdentity.get(key) ?? { ids: [], times: [], head: 0, retentionMs: 0, bytes: 0 };
    returns.retentionMs = Math.max(returns.retentionMs, settings.windowMs);
    for (const itemId of itemIds) {
      const id = tenant.catalog.idOf(itemId);
      if (id < 0) continue;
      returns.ids.push(id);
      returns.times.push(now);
      returns.bytes += RETURN_BYTES;
    }
    const since = now - returns.retentionMs;
    const { times } = returns;
    while (
      returns.head < times.length &&
      (times.length - returns.head > MAX_RETURNS_PER_IDENTITY || times[returns.head] <= since)
    ) {
      returns.bytes -= RETURN_BYTES;
      returns.head++;
    }
    if (returns.head * 2 > times.length) {
      returns.ids.splice(0, returns.head);
      times.splice(0, returns.head);
      returns.head = 0;
    }
    // Set again so that its size and its time to live are those of now.
    this.byIdentity.set(key, returns, { ttl: Math.ceil(returns.retentionMs) });
  }
}

function keyOf(tenantId: string, identity: string): string {
  return `${tenantId}\u0000${identity}`;
}
