import type { TenantState } from '../state/tenant-state.js';

interface Entry<T> {
  catalogVersion: number;
  countsVersion: number;
  computedAt: number;
  value: T;
}

/**
 * Recomputing scans the whole catalog, so under a stream of writes a value lags the counts by at most
 * this long instead of being recomputed on every request.
 */
const MAX_STALENESS_MS = 1_000;

/**
 * Values derived from a tenant's catalog and 30-day interaction counts (popularity rankings, the
 * long-tail median), kept per tenant and scope until either changes, and at most a second behind them.
 */
export class CountsDerived<T> {
  private readonly entries = new WeakMap<TenantState, Map<string, Entry<T>>>();

  /** The value for this tenant and scope; `compute` runs only when the kept one is out of date. */
  get(tenant: TenantState, scope: string, now: number, compute: () => T): T {
    let byScope = this.entries.get(tenant);
    if (!byScope) this.entries.set(tenant, (byScope = new Map()));
    const counts = tenant.recentCounts;
    counts.advance(now);
    const cached = byScope.get(scope);
    if (
      cached &&
      ((cached.catalogVersion === tenant.catalog.version && cached.countsVersion === counts.version) ||
        now - cached.computedAt < MAX_STALENESS_MS)
    ) {
      return cached.value;
    }
    const value = compute();
    byScope.set(scope, {
      catalogVersion: tenant.catalog.version,
      countsVersion: counts.version,
      computedAt: now,
      value,
    });
    return value;
  }
}
