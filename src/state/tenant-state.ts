import { defaultTenantSettings, type TenantSettings } from '../contract/tenant-settings.js';
import type { StoredInteraction, StoredUser } from '../store/rows.js';
import { NameTable } from './name-table.js';
import { TenantConfig } from './tenant-config.js';
import { ItemCatalog } from './item-catalog.js';
import { ItemNeighbours } from '../models/item-neighbours.js';
import { WindowedCounts } from '../models/windowed-counts.js';
import { DAY_MS, HISTORY_WINDOW_MS, TYPE_CODES, UserHistories, insideWindow } from './user-histories.js';

export const GEO_WINDOW_MS = 7 * DAY_MS;

/** Everything the daemon serves a tenant from, in memory; rebuilt from the store at start. */
export class TenantState {
  readonly catalog = new ItemCatalog();
  readonly histories = new UserHistories();
  /** Country codes of the histories and geo counters; 0 is global. */
  readonly countries = new NameTable();
  readonly config = new TenantConfig();
  readonly users = new Map<string, StoredUser>();
  readonly interactionEventIds = new Set<string>();
  readonly impressionEventIds = new Set<string>();
  /** 7-day counts per item and country: geo lift and geo-aware popularity. */
  readonly geoCounts = new WindowedCounts(GEO_WINDOW_MS, true);
  /** 30-day counts per item: popularity and the long-tail median. */
  readonly recentCounts = new WindowedCounts(HISTORY_WINDOW_MS, false);
  settings: TenantSettings = defaultTenantSettings();
  /** Every interaction stored for the tenant, to tell when the neighbour model is stale. */
  interactionTotal = 0;
  /** Item-to-item neighbours, replaced whole when a new model is built. */
  neighbours = ItemNeighbours.empty();

  constructor(readonly tenantId: string) {}

  /** Adds a committed interaction to the identity's windowed history. */
  recordInteraction(event: StoredInteraction, now: number): void {
    if (event.eventId !== null) this.interactionEventIds.add(event.eventId);
    const type = TYPE_CODES[event.type];
    if (!insideWindow(type, event.ts, now)) return;
    const item = this.catalog.ensureId(event.itemId);
    const country = this.countries.codeOf(event.country);
    this.geoCounts.add(item, country, event.ts, now);
    this.recentCounts.add(item, country, event.ts, now);
    const identity = event.userId ?? event.sessionId;
    if (identity === null) return;
    this.histories.add(identity, { item, type, ts: event.ts, weight: event.weight, country }, now);
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
