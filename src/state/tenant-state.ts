import type { Feed } from '../contract/feeds.js';
import { defaultTenantSettings, type TenantSettings } from '../contract/tenant-settings.js';
import type { RateLimitSettings } from '../contract/tenants.js';
import type { StoredInteraction, StoredItem, StoredUser } from '../store/rows.js';
import { NameTable } from './name-table.js';
import {
  factorArrays,
  neighbourArrays,
  type CountsName,
  type NeighbourModel,
  type StateChangeLog,
} from './state-changes.js';
import { TenantConfig, type ConfigCollection, type ConfigDocument } from './tenant-config.js';
import { ItemCatalog, catalogItem, type CatalogItem } from './item-catalog.js';
import { ItemNeighbours } from './item-neighbours.js';
import type { ServingFactors } from './factor-model.js';
import {
  SharedCountsReader,
  WindowedCounts,
  type CountsReader,
  type SharedCounts,
} from './windowed-counts.js';
import {
  DAY_MS,
  HISTORY_WINDOW_MS,
  SharedHistoriesReader,
  TYPE_CODES,
  UserHistories,
  insideWindow,
  type HistoriesView,
  type SharedHistories,
} from './user-histories.js';
import { TenantVectors, type VectorBase } from '../vector/tenant-vectors.js';

export const GEO_WINDOW_MS = 7 * DAY_MS;

/**
 * Everything the daemon serves a tenant from, in memory; rebuilt from the store at start. What ranking
 * reads changes only through the methods here, which tell the change log (when there is one) about it.
 */
export class TenantState {
  readonly catalog = new ItemCatalog();
  /** The histories: kept here, or (a replica) read from the memory the original shares. */
  readonly histories: HistoriesView;
  /** Country codes of the histories and geo counters; 0 is global. */
  readonly countries = new NameTable();
  readonly config = new TenantConfig();
  readonly users = new Map<string, StoredUser>();
  readonly interactionEventIds = new Set<string>();
  readonly impressionEventIds = new Set<string>();
  /** 7-day counts per item and country: geo lift and geo-aware popularity. */
  readonly geoCounts: CountsReader;
  /** 30-day counts per item: popularity and the long-tail median. */
  readonly recentCounts: CountsReader;
  /**
   * The histories and counters as this state holds them: its own, which it writes (and shares with a
   * replica), or, for a replica, readers of the memory its original shares.
   */
  private readonly parts:
    | { kind: 'own'; histories: UserHistories; geo: WindowedCounts; recent: WindowedCounts }
    | {
        kind: 'shared';
        histories: SharedHistoriesReader;
        geo: SharedCountsReader;
        recent: SharedCountsReader;
      };
  /** Every interaction stored for the tenant, to tell when the neighbour model is stale. */
  interactionTotal = 0;
  /** Requests per minute per credential kind (docs/guide.md, "Rate limits"); empty: unlimited. */
  rateLimits: RateLimitSettings = {};
  /** The merge ledger: user id → the session ids merged into it. */
  readonly mergedSessions = new Map<string, Set<string>>();
  /** Item vectors for similar-products, multi-seed-hybrid and search (docs/guide.md, "Vectors and search"). */
  readonly vectors = new TenantVectors();
  /** Catalog feeds by id (docs/guide.md, "Catalog feeds"); ranking never reads them. */
  readonly feeds = new Map<string, Feed>();
  private currentSettings: TenantSettings = defaultTenantSettings();
  private currentFactors: ServingFactors | undefined;
  private readonly neighbourModels: Record<NeighbourModel, ItemNeighbours> = {
    cooccurrence: ItemNeighbours.empty(),
    ease: ItemNeighbours.empty(),
  };

  /** @param replica whether this state copies another's (WorkerRanker's ranking thread) */
  constructor(
    readonly tenantId: string,
    private readonly changes?: StateChangeLog,
    replica = false,
  ) {
    this.parts = replica
      ? {
          kind: 'shared',
          histories: new SharedHistoriesReader(),
          geo: new SharedCountsReader(GEO_WINDOW_MS),
          recent: new SharedCountsReader(HISTORY_WINDOW_MS),
        }
      : {
          kind: 'own',
          histories: new UserHistories(),
          geo: new WindowedCounts(GEO_WINDOW_MS, true),
          recent: new WindowedCounts(HISTORY_WINDOW_MS, false),
        };
    this.histories = this.parts.histories;
    this.geoCounts = this.parts.geo;
    this.recentCounts = this.parts.recent;
  }

  /**
   * Shares the histories and counts with a replica, through the change log: now, and whenever their
   * arrays are replaced (docs/memory.md).
   */
  shareWithReplica(): void {
    const { changes, parts, tenantId } = this;
    if (!changes || parts.kind !== 'own') return;
    parts.histories.share((histories) => changes.record({ kind: 'histories', tenantId, histories }));
    for (const name of ['geo', 'recent'] as const) {
      parts[name].share((counts) => changes.record({ kind: 'counts', tenantId, name, counts }));
    }
  }

  /** A replica's histories are read from these arrays from now on. */
  readSharedHistories(histories: SharedHistories): void {
    this.replicaParts().histories.replace(histories);
  }

  /** A replica's counts are read from these arrays from now on. */
  readSharedCounts(name: CountsName, counts: SharedCounts): void {
    this.replicaParts()[name].replace(counts);
  }

  private replicaParts(): Extract<TenantState['parts'], { kind: 'shared' }> {
    if (this.parts.kind !== 'shared') throw new Error('only a replica reads shared histories and counts');
    return this.parts;
  }

  get settings(): TenantSettings {
    return this.currentSettings;
  }

  /** Item-to-item neighbours (co-occurrence), replaced whole when a new model is loaded. */
  get neighbours(): ItemNeighbours {
    return this.neighbourModels.cooccurrence;
  }

  /** A model of item neighbour lists: `cooccurrence` or `ease`. */
  neighbourModel(model: NeighbourModel): ItemNeighbours {
    return this.neighbourModels[model];
  }

  /** The ALS model, when one was built. */
  get factors(): ServingFactors | undefined {
    return this.currentFactors;
  }

  replaceFactors(model: ServingFactors): void {
    this.currentFactors = model;
    this.changes?.record({ kind: 'factors', tenantId: this.tenantId, model: factorArrays(model) });
  }

  replaceSettings(settings: TenantSettings): void {
    this.currentSettings = settings;
    this.changes?.record({ kind: 'settings', tenantId: this.tenantId, settings });
  }

  replaceNeighbours(model: ItemNeighbours, name: NeighbourModel = 'cooccurrence'): void {
    this.neighbourModels[name] = model;
    this.changes?.record({
      kind: 'neighbours',
      tenantId: this.tenantId,
      name,
      model: neighbourArrays(model),
    });
  }

  /** Makes a built set of vectors (the vectors artifact) the base of vector search. */
  replaceVectorBase(base: VectorBase): void {
    this.vectors.replaceBase(base, (externalId) => this.catalog.ensureId(externalId));
    this.changes?.record({ kind: 'vector-base', tenantId: this.tenantId, base });
  }

  /**
   * Sets items' vectors (rows of `vectors`), embedded from texts with these hashes. Items are named by
   * external id: one the catalog does not have yet gets its dense id here, in every thread alike.
   */
  setVectors(externalIds: string[], vectors: Float32Array, hashes: Uint32Array): void {
    const items = externalIds.map((externalId) => this.catalog.ensureId(externalId));
    this.vectors.set(items, vectors, hashes);
    this.changes?.record({ kind: 'vectors', tenantId: this.tenantId, externalIds, vectors, hashes });
  }

  /** Takes items out of vector search. */
  removeVectors(items: number[]): void {
    this.vectors.remove(items);
    this.changes?.record({ kind: 'vector-removals', tenantId: this.tenantId, items });
  }

  putConfigDocument(collection: ConfigCollection, key: string, document: ConfigDocument): void {
    this.config.put(collection, key, document);
    this.changes?.record({ kind: 'config', tenantId: this.tenantId, collection, key, document });
  }

  removeConfigDocument(collection: ConfigCollection, key: string): void {
    this.config.remove(collection, key);
    this.changes?.record({ kind: 'config', tenantId: this.tenantId, collection, key });
  }

  upsertItem(item: StoredItem): void {
    const entry = catalogItem(item);
    this.changes?.itemUpserted(this.tenantId, entry);
    this.catalog.upsertEntry(entry, item.attributes);
  }

  /** An item in the catalog's form, as a replica is told of it. */
  upsertCatalogItem(item: CatalogItem): void {
    this.changes?.itemUpserted(this.tenantId, item);
    this.catalog.upsertEntry(item);
  }

  /**
   * Takes deleted items out of the catalog and of vector search (docs/guide.md, "Deleting items"); their
   * dense ids stay behind, naming nothing (see ItemCatalog.remove). Returns those dense ids.
   */
  removeItems(externalIds: readonly string[]): number[] {
    this.changes?.record({ kind: 'item-removals', tenantId: this.tenantId, externalIds: [...externalIds] });
    const removed: number[] = [];
    for (const externalId of externalIds) {
      const id = this.catalog.remove(externalId);
      if (id >= 0) removed.push(id);
    }
    this.vectors.remove(removed);
    for (const id of removed) this.vectors.awaitingBuild.delete(id);
    return removed;
  }

  /**
   * Adds a committed interaction: its event id, and its place in the windowed history. Returns the item's
   * dense id, or -1 when the interaction is outside every window (and the item may have none).
   */
  recordInteraction(event: StoredInteraction, now: number): number {
    if (event.eventId !== null) this.interactionEventIds.add(event.eventId);
    return this.recordHistory(event, now);
  }

  /**
   * The part of `recordInteraction` that ranking reads (a replica of the state applies it through
   * `addToHistory`). A copy made by an identity merge joins its user's history but not the counters, which
   * counted the original. Returns the item's dense id, or -1 outside the windows.
   */
  recordHistory(event: StoredInteraction, now: number): number {
    const type = TYPE_CODES[event.type];
    if (!insideWindow(type, event.ts, now)) return -1;
    const { catalog, countries, parts } = this;
    const itemsBefore = catalog.size;
    const countriesBefore = countries.size;
    const historiesBefore = parts.kind === 'own' ? parts.histories.indexesGiven : 0;
    const identity = event.userId ?? event.sessionId;
    const item = catalog.ensureId(event.itemId);
    const index = this.addToHistory(
      item,
      identity,
      event.country,
      type,
      event.ts,
      event.weight,
      event.merged === true,
      now,
    );
    // A replica reads the histories and counters from shared memory: it is told of an interaction only
    // when it brings a new item, country or history, which it must number as this state did.
    if (catalog.size > itemsBefore || countries.size > countriesBefore || index >= historiesBefore)
      this.changes?.interactionRecorded(this.tenantId, event, type, now, index);
    return item;
  }

  /**
   * An interaction inside its window (`recordHistory`), field by field, its item by dense id, as a
   * replica is told of it. Returns the index of the identity's history (-1 for none): a replica is given
   * it (`index`), and reads the history there.
   */
  addToHistory(
    item: number,
    identity: string | null,
    countryName: string | null,
    type: number,
    ts: number,
    weight: number,
    merged: boolean,
    now: number,
    index = -1,
  ): number {
    const country = this.countries.codeOf(countryName);
    const { parts } = this;
    if (!merged && parts.kind === 'own') {
      parts.geo.add(item, country, ts, now);
      parts.recent.add(item, country, ts, now);
    }
    if (identity === null) return -1;
    if (parts.kind === 'own') return parts.histories.add(identity, item, type, ts, weight, now);
    parts.histories.bind(identity, index);
    return index;
  }

  /** Records that a session's events were copied to a user (the merge ledger). */
  recordMerge(userId: string, sessionId: string): void {
    let sessions = this.mergedSessions.get(userId);
    if (!sessions) this.mergedSessions.set(userId, (sessions = new Set()));
    sessions.add(sessionId);
  }

  hasMerged(userId: string, sessionId: string): boolean {
    return this.mergedSessions.get(userId)?.has(sessionId) ?? false;
  }

  /**
   * Forgets deleted identities (a user and the sessions merged into it): their histories, user rows, merge
   * ledger entries and the event ids they sent. Counters are anonymous sums and age out of their windows.
   */
  forgetIdentities(identities: string[], eventIds: string[] = []): void {
    this.changes?.record({ kind: 'forget', tenantId: this.tenantId, identities });
    for (const identity of identities) {
      this.histories.delete(identity);
      this.users.delete(identity);
      this.mergedSessions.delete(identity);
    }
    for (const sessions of this.mergedSessions.values()) {
      for (const identity of identities) sessions.delete(identity);
    }
    for (const eventId of eventIds) this.interactionEventIds.delete(eventId);
  }
}

/** The tenants this process serves. */
export class ServingState {
  private readonly tenants = new Map<string, TenantState>();

  /**
   * @param changes where changes go, for a replica of this state to apply
   * @param replica whether this state is such a replica
   */
  constructor(
    private readonly changes?: StateChangeLog,
    private readonly replica = false,
  ) {}

  get(tenantId: string): TenantState | undefined {
    return this.tenants.get(tenantId);
  }

  add(tenantId: string): TenantState {
    let state = this.tenants.get(tenantId);
    if (!state) {
      state = new TenantState(tenantId, this.changes, this.replica);
      this.tenants.set(tenantId, state);
      this.changes?.record({ kind: 'tenant', tenantId });
      state.shareWithReplica();
    }
    return state;
  }

  ids(): string[] {
    return [...this.tenants.keys()].sort();
  }
}
