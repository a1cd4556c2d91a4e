import type { GeoLift } from '../models/geo-lift.js';
import type { TenantState } from '../state/tenant-state.js';
import { CountsDerived } from './counts-derived.js';

export interface PopularityRanking {
  /** Every catalog item, most popular first. */
  ids: Int32Array;
  /** Normalised to (0, 1]: the top item has 1, an item never interacted with still has more than 0. */
  scores: Float64Array;
}

function rank(tenant: TenantState, geo: GeoLift | undefined): PopularityRanking {
  const { catalog, recentCounts: counts } = tenant;
  const ids: number[] = [];
  for (let id = 0; id < catalog.size; id++) if (catalog.inCatalog[id]) ids.push(id);
  const raw = new Float64Array(catalog.size);
  let max = 0;
  for (const id of ids) {
    raw[id] = (counts.count(id) + 1) * (geo ? geo.lift(id) : 1);
    if (raw[id] > max) max = raw[id];
  }
  ids.sort((a, b) => raw[b] - raw[a] || a - b);
  return { ids: Int32Array.from(ids), scores: Float64Array.from(ids, (id) => raw[id] / max) };
}

const rankings = new CountsDerived<PopularityRanking>();

/**
 * Popularity = 30-day interaction count (+1, so unseen items still rank), times the geo lift of the
 * request's country when there is one. Cached per tenant and geo scope.
 */
export function popularityRanking(
  tenant: TenantState,
  geo: GeoLift | undefined,
  now: number,
): PopularityRanking {
  return rankings.get(tenant, geo?.scope ?? '_global_', now, () => rank(tenant, geo));
}
