import { clusterCountries, clusterOf } from '../geo/clusters.js';
import { normalizeCountry } from '../geo/countries.js';
import type { TenantState } from '../state/tenant-state.js';

/** Below this many events in the 7-day window a country borrows its cluster's counts, then none. */
export const MIN_SCOPE_EVENTS = 50;

/**
 * Geo lift v1: how much more an item is interacted with in the request's country (or its cluster) than
 * everywhere, smoothed so that no lift is 0:
 *   lift = ((c_i,scope + 1) / (N_scope + I)) / ((c_i + 1) / (N + I))   over the 7-day window,
 * I being the catalog size. No cap (v1).
 */
export interface GeoLift {
  /** `country` or `cluster:<name>`: what the statistics came from. */
  readonly scope: string;
  lift(item: number): number;
}

export function geoLiftFor(
  tenant: TenantState,
  requestCountry: string | undefined,
  now: number,
): GeoLift | undefined {
  const country = normalizeCountry(requestCountry);
  if (!country) return undefined;
  const counts = tenant.geoCounts;
  counts.advance(now);
  const catalogSize = tenant.catalog.itemCount;
  const global = counts.globalTotal;
  const make = (scope: string, scopeCount: (item: number) => number, scopeTotal: number): GeoLift => ({
    scope,
    lift: (item) =>
      (scopeCount(item) + 1) /
      (scopeTotal + catalogSize) /
      ((counts.count(item) + 1) / (global + catalogSize)),
  });

  const index = tenant.countries.find(country);
  if (index !== 0 && counts.countryTotal(index) >= MIN_SCOPE_EVENTS) {
    return make(country, (item) => counts.countryCount(index, item), counts.countryTotal(index));
  }
  const cluster = clusterOf(country);
  if (!cluster) return undefined;
  const members = clusterCountries(cluster)
    .map((code) => tenant.countries.find(code))
    .filter((member) => member !== 0 && counts.countryTotal(member) > 0);
  const total = members.reduce((sum, member) => sum + counts.countryTotal(member), 0);
  if (total < MIN_SCOPE_EVENTS) return undefined;
  return make(
    `cluster:${cluster}`,
    (item) => members.reduce((sum, member) => sum + counts.countryCount(member, item), 0),
    total,
  );
}
