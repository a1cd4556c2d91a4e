import { VECTOR_DEFAULTS, type VectorDefaults } from '../contract/vectors.js';
import type { Store } from '../store/store.js';
import { saveConfigDocument } from '../store/api/config.js';
import type { StoredDocumentKind } from '../state/load-state.js';
import { VECTOR_DEFAULTS_KEY } from '../state/tenant-config.js';
import type { TenantState } from '../state/tenant-state.js';

/** The configuration document that holds a tenant's vector defaults. */
export const VECTOR_DEFAULTS_KIND = 'vector-defaults';

export const vectorDefaultsDocuments: StoredDocumentKind = {
  kind: VECTOR_DEFAULTS_KIND,
  vectorConfig: 'defaults',
  restore(tenant, stored) {
    const parsed = VECTOR_DEFAULTS.safeParse(stored);
    if (parsed.success) tenant.putConfigDocument('vectorDefaults', VECTOR_DEFAULTS_KEY, parsed.data);
  },
  forget(tenant) {
    tenant.removeConfigDocument('vectorDefaults', VECTOR_DEFAULTS_KEY);
  },
};

/**
 * Replaces a tenant's vector search defaults (`PUT /catalog/vector-defaults`): the fields sent, the others
 * back to the built-in defaults. Scenarios' `vectorSettings` still win over them.
 */
export function setVectorDefaults(
  runtime: { readonly store: Store },
  tenant: TenantState,
  defaults: VectorDefaults,
): Promise<VectorDefaults> {
  return runtime.store.writes.submit((rows) => {
    rows.ops.push(saveConfigDocument(tenant.tenantId, VECTOR_DEFAULTS_KIND, '', defaults));
    return () => {
      tenant.putConfigDocument('vectorDefaults', VECTOR_DEFAULTS_KEY, defaults);
      return defaults;
    };
  });
}
