import { defaultTenantSettings, type TenantSettings } from '../contract/tenant-settings.js';
import type { StoredInteraction, StoredUser } from '../store/rows.js';
import { CountryTable } from './country-table.js';
import { ItemCatalog } from './item-catalog.js';
import { TYPE_CODES, UserHistories, insideWindow } from './user-histories.js';

/** Everything the daemon serves a tenant from, in memory; rebuilt from the store at start. */
export class TenantState {
  readonly catalog = new ItemCatalog();
  readonly histories = new UserHistories();
  readonly countries = new CountryTable();
  readonly users = new Map<string, StoredUser>();
  readonly interactionEventIds = new Set<string>();
  readonly impressionEventIds = new Set<string>();
  settings: TenantSettings = defaultTenantSettings();

  constructor(readonly tenantId: string) {}

  /** Adds a committed interaction to the identity's windowed history. */
  recordInteraction(event: StoredInteraction, now: number): void {
    if (event.eventId !== null) this.interactionEventIds.add(event.eventId);
    const type = TYPE_CODES[event.type];
    if (!insideWindow(type, event.ts, now)) return;
    const identity = event.userId ?? event.sessionId;
    if (identity === null) return;
    this.histories.add(
      identity,
      {
        item: this.catalog.ensureId(event.itemId),
        type,
        ts: event.ts,
        weight: event.weight,
        country: this.countries.indexOf(event.country),
      },
      now,
    );
  }
}

/** The tenants this process serves. */
export class ServingState {
  private readonly tenants = new Map<string, TenantState>();

  get(tenantId: string): TenantState | undefined {
    return this.tenants.get(tenantId);
  }

  add(tenantId: string): TenantState {
    let state = this.tenants.get(tenantId);
    if (!state) {
      state = new TenantState(tenantId);
      this.tenants.set(tenantId, state);
    }
    return state;
  }

  ids(): string[] {
    return [...this.tenants.keys()].sort();
  }
}
