import type { TenantSettings, TenantSettingsUpdate } from '../contract/tenant-settings.js';
import type { Runtime } from '../runtime.js';
import { saveConfigDocument } from '../store/config-statements.js';
import { TENANT_SETTINGS_KIND } from '../store/load-state.js';
import type { TenantState } from '../state/tenant-state.js';

/** A partial update: the fields sent replace those fields, the rest stay. */
export function updateTenantSettings(
  runtime: Runtime,
  tenant: TenantState,
  update: TenantSettingsUpdate,
): Promise<TenantSettings> {
  return runtime.store.writes.submit((rows) => {
    const settings: TenantSettings = { ...tenant.settings };
    for (const [field, value] of Object.entries(update)) {
      if (value !== undefined) Object.assign(settings, { [field]: value });
    }
    rows.statements.push(saveConfigDocument(tenant.tenantId, TENANT_SETTINGS_KIND, '', settings));
    return () => {
      tenant.replaceSettings(settings);
      return settings;
    };
  });
}
