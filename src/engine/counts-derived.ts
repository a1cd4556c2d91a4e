import type { TenantState } from '../state/tenant-state.js';

interface Entry<T> {
  catalogVersion: number;
  countsVersion: number;
  computedAt: number;
  value: T;
}

/**
 * How long what is derived from the windowed counts (popularity, the long-tail median, cached answers)
 * may lag them: the contract's "geo counters show within 1 s". Under a stream of writes, recomputing
 * once per second rather than on every request.
 */
export const MAX_STALENESS_MS = 1_000;

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
