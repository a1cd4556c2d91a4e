import { RATE_LIMITS, type RateLimitSettings } from '../contract/tenants.js';
import { ApiError } from '../contract/errors.js';
import type { Store } from '../store/store.js';
import { saveConfigDocument } from '../store/api/config.js';
import type { StoredDocumentKind } from '../state/load-state.js';
import type { ServingState } from '../state/tenant-state.js';

/** The configuration document that holds a tenant's rate limits. */
export const RATE_LIMITS_KIND = 'rate-limits';

export const rateLimitDocuments: StoredDocumentKind = {
  kind: RATE_LIMITS_KIND,
  restore(tenant, stored) {
    const parsed = RATE_LIMITS.safeParse(stored);
    if (parsed.success) tenant.rateLimits = parsed.data;
  },
  forget(tenant) {
    tenant.rateLimits = {};
  },
};

/** Replaces a tenant's rate limits (docs/guide.md, "Rate limits"); the new budgets apply from the next request. */
export function setRateLimits(
  runtime: { readonly store: Store; readonly state: ServingState },
  tenantId: string,
  limits: RateLimitSettings,
): Promise<RateLimitSettings> {
  return runtime.store.writes.submit((rows) => {
    const tenant = runtime.state.get(tenantId);
    if (!tenant) throw new ApiError('NOT_FOUND', `tenant '${tenantId}' does not exist`);
    const stored: RateLimitSettings = {};
    for (const [kind, perMinute] of Object.entries(limits)) {
      if (typeof perMinute === 'number') stored[kind as keyof RateLimitSettings] = perMinute;
    }
    rows.ops.push(saveConfigDocument(tenantId, RATE_LIMITS_KIND, '', stored));
    return () => {
      tenant.rateLimits = stored;
      return stored;
    };
  });
}
