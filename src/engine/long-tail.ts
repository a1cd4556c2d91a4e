import type { TenantState } from '../state/tenant-state.js';

interface CachedThreshold {
  catalogVersion: number;
  countsVersion: number;
  computedAt: number;
  median: number;
}

const MAX_STALENESS_MS = 1_000;
const cache = new WeakMap<TenantState, CachedThreshold>();

/**
 * Long-tail items are those whose 30-day interaction count is below the median count of the catalog's
 * items (items without interactions included). Returns that median.
 */
export function longTailThreshold(tenant: TenantState, now: number): number {
  const counts = tenant.recentCounts;
  counts.advance(now);
  const cached = cache.get(tenant);
  if (
    cached &&
    ((cached.catalogVersion === tenant.catalog.version && cached.countsVersion === counts.version) ||
      now - cached.computedAt < MAX_STALENESS_MS)
  ) {
    return cached.median;
  }
  const { catalog } = tenant;
  const values: number[] = [];
  for (let id = 0; id < catalog.size; id++) if (catalog.inCatalog[id]) values.push(counts.count(id));
  values.sort((a, b) => a - b);
  const middle = values.length >> 1;
  const median =
    values.length === 0 ? 0 : values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
  cache.set(tenant, {
    catalogVersion: catalog.version,
    countsVersion: counts.version,
    computedAt: now,
    median,
  });
  return median;
}
