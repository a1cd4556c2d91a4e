import type { TenantState } from '../state/tenant-state.js';
import { CountsDerived } from './counts-derived.js';

const medians = new CountsDerived<number>();

function medianCount(tenant: TenantState): number {
  const { catalog, recentCounts: counts } = tenant;
  let items = 0;
  for (let id = 0; id < catalog.size; id++) items += catalog.inCatalog[id];
  // Typed and sorted without a comparison callback: a fraction of an array sorted through one.
  const values = new Int32Array(items);
  for (let id = 0, next = 0; id < catalog.size; id++)
    if (catalog.inCatalog[id]) values[next++] = counts.count(id);
  values.sort();
  const middle = values.length >> 1;
  if (values.length === 0) return 0;
  return values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

/**
 * Long-tail items are those whose 30-day interaction count is below the median count of the catalog's
 * items (items without interactions included). Returns that median.
 */
export function longTailThreshold(tenant: TenantState, now: number): number {
  return medians.get(tenant, '', now, () => medianCount(tenant));
}
