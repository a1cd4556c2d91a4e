import {
  TENANT_SETTINGS_UPDATE,
  defaultTenantSettings,
  interactionWeightsOf,
  type TenantSettings,
  type TenantSettingsUpdate,
} from '../contract/tenant-settings.js';
import type { Store } from '../store/database.js';
import { saveConfigDocument } from '../store/config-statements.js';
import type { StoredDocumentKind } from '../state/load-state.js';
import type { TenantState } from '../state/tenant-state.js';

export const TENANT_SETTINGS_KIND = 'tenant-settings';

/** A tenant's stored settings, over the defaults of the fields it lacks. */
export const tenantSettingsDocuments: StoredDocumentKind = {
  kind: TENANT_SETTINGS_KIND,
  restore(tenant, stored) {
    const parsed = TENANT_SETTINGS_UPDATE.safeParse(stored);
    if (parsed.success)
      tenant.replaceSettings({
        ...defaultTenantSettings(),
        ...parsed.data,
        interactionWeights: interactionWeightsOf(parsed.data.interactionWeights),
      });
  },
};

/** A partial update: the fields sent replace those fields, the rest stay. */
export function updateTenantSettings(
  runtime: { readonly store: Store },
  tenant: TenantState,
  update: TenantSettingsUpdate,
): Promise<TenantSettings> {
  return runtime.store.writes.submit((rows) => {
    const settings: TenantSettings = { ...tenant.settings };
    for (const [field, value] of Object.entries(update)) {
      if (value !== undefined) Object.assign(settings, { [field]: value });
    }
    if (update.interactionWeights)
      settings.interactionWeights = interactionWeightsOf(update.interactionWeights);
    rows.statements.push(saveConfigDocument(tenant.tenantId, TENANT_SETTINGS_KIND, '', settings));
    return () => {
      tenant.replaceSettings(settings);
      return settings;
    };
  });
}
