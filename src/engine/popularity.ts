import type { GeoLift } from '../models/geo-lift.js';
import type { TenantState } from '../state/tenant-state.js';

export interface PopularityRanking {
  /** Every catalog item, most popular first. */
  ids: Int32Array;
  /** Normalised to (0, 1]: the top item has 1, an item never interacted with still has more than 0. */
  scores: Float64Array;
}

interface CachedRanking extends PopularityRanking {
  catalogVersion: number;
  countsVersion: number;
  computedAt: number;
}

/** Recomputing sorts the whole catalog, so under a stream of writes it happens at most this often. */
const MAX_STALENESS_MS = 1_000;

const rankings = new WeakMap<TenantState, Map<string, CachedRanking>>();

/**
 * Popularity = 30-day interaction count (+1, so unseen items still rank), times the geo lift of the
 * request's country when there is one. Cached per tenant and geo scope.
 */
export function popularityRanking(
  tenant: TenantState,
  geo: GeoLift | undefined,
  now: number,
): PopularityRanking {
  let byScope = rankings.get(tenant);
  if (!byScope) {
    byScope = new Map();
    rankings.set(tenant, byScope);
  }
  const scope = geo?.scope ?? '_global_';
  const cached = byScope.get(scope);
  const counts = tenant.recentCounts;
  counts.advance(now);
  const current =
    cached && cached.catalogVersion === tenant.catalog.version && cached.countsVersion === counts.version;
  if (cached && (current || now - cached.computedAt < MAX_STALENESS_MS)) return cached;

  const { catalog } = tenant;
  const ids: number[] = [];
  for (let id = 0; id < catalog.size; id++) if (catalog.inCatalog[id]) ids.push(id);
  const raw = new Float64Array(catalog.size);
  let max = 0;
  for (const id of ids) {
    raw[id] = (counts.count(id) + 1) * (geo ? geo.lift(id) : 1);
    if (raw[id] > max) max = raw[id];
  }
  ids.sort((a, b) => raw[b] - raw[a] || a - b);
  const ranking: CachedRanking = {
    ids: Int32Array.from(ids),
    scores: Float64Array.from(ids, (id) => raw[id] / max),
    catalogVersion: catalog.version,
    countsVersion: counts.version,
    computedAt: now,
  };
  byScope.set(scope, ranking);
  return ranking;
}
