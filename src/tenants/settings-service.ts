import type { TenantSettings, TenantSettingsUpdate } from '../contract/tenant-settings.js';
import type { Runtime } from '../runtime.js';
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
    rows.statements.push({
      sql: 'INSERT OR REPLACE INTO config_documents VALUES ($1, $2, $3, $4, $5)',
      params: [tenant.tenantId, TENANT_SETTINGS_KIND, '', JSON.stringify(settings), Date.now()],
    });
    return () => {
      tenant.settings = settings;
      return settings;
    };
  });
}
