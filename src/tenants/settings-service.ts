import {
  TENANT_SETTINGS_UPDATE,
  defaultTenantSettings,
  interactionWeightsOf,
  type TenantSettings,
  type TenantSettingsUpdate,
} from '../contract/tenant-settings.js';
import type { Store } from '../store/store.js';
import { saveConfigDocument } from '../store/api/config.js';
import type { StoredDocumentKind } from '../state/load-state.js';
import type { TenantState } from '../state/tenant-state.js';

export const TENANT_SETTINGS_KIND = 'tenant-settings';

/**
 * `base` with the fields of `update` that are set in place of its own; interaction weights sent are
 * completed with the defaults of the types they lack.
 */
function settingsWith(base: TenantSettings, update: TenantSettingsUpdate): TenantSettings {
  const settings: TenantSettings = { ...base };
  for (const [field, value] of Object.entries(update)) {
    if (value !== undefined) Object.assign(settings, { [field]: value });
  }
  if (update.interactionWeights)
    settings.interactionWeights = interactionWeightsOf(update.interactionWeights);
  return settings;
}

/** A tenant's stored settings, over the defaults of the fields it lacks. */
export const tenantSettingsDocuments: StoredDocumentKind = {
  kind: TENANT_SETTINGS_KIND,
  restore(tenant, stored) {
    const parsed = TENANT_SETTINGS_UPDATE.safeParse(stored);
    if (parsed.success) tenant.replaceSettings(settingsWith(defaultTenantSettings(), parsed.data));
  },
  forget(tenant) {
    tenant.replaceSettings(defaultTenantSettings());
  },
};

/** A partial update: the fields sent replace those fields, the rest stay. */
export function updateTenantSettings(
  runtime: { readonly store: Store },
  tenant: TenantState,
  update: TenantSettingsUpdate,
): Promise<TenantSettings> {
  return runtime.store.writes.submit((rows) => {
    const settings = settingsWith(tenant.settings, update);
    rows.ops.push(saveConfigDocument(tenant.tenantId, TENANT_SETTINGS_KIND, '', settings));
    return () => {
      tenant.replaceSettings(settings);
      return settings;
    };
  });
}
