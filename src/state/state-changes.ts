import type { TenantSettings } from '../contract/tenant-settings.js';
import { ItemNeighbours, type CompactNumbering } from './item-neighbours.js';
import { ServingFactors } from './factor-model.js';
import type { StoredInteraction } from '../store/rows.js';
import type { CatalogItem } from './item-catalog.js';
import type { SharedHistories } from './user-histories.js';
import type { ConfigCollection, ConfigDocument } from './tenant-config.js';
import type { SharedCounts } from './windowed-counts.js';
import type { VectorBase } from '../vector/tenant-vectors.js';

/** The models served as item neighbour lists. */
export type NeighbourModel = 'cooccurrence' | 'ease';

/** The windowed counts of a tenant: 7-day per item and country, 30-day per item. */
export type CountsName = 'geo' | 'recent';

/** An item-neighbour model as plain data: a message between threads carries no classes. */
export interface NeighbourArrays {
  offsets: Int32Array;
  neighbours: Int32Array;
  /** Half-precision bits. */
  weights: Uint16Array;
  interactionCount: number;
  builtAt: number;
  /** What the model derived from its lists, carried along so that a receiving thread need not redo it. */
  reach: number;
  compact: CompactNumbering | undefined;
}

/**
 * One change of the serving state, as data. Applied in the order they happened, the changes of a state
 * rebuild it with the same dense item ids, so a replica ranks exactly as the state it copies would.
 * Only what ranking reads is described: users and event ids stay with the state that writes, and the
 * histories and windowed counts are shared memory (`histories` and `counts` hand a replica their
 * arrays; only the original writes them).
 */
export type StateChange =
  | { kind: 'tenant'; tenantId: string }
  | { kind: 'settings'; tenantId: string; settings: TenantSettings }
  | {
      kind: 'config';
      tenantId: string;
      collection: ConfigCollection;
      key: string;
      /** Absent: the document was removed. */
      document?: ConfigDocument;
    }
  | { kind: 'items'; tenantId: string; items: CatalogItem[] }
  | { kind: 'interactions'; tenantId: string; now: number; rows: HistoryRows }
  | { kind: 'neighbours'; tenantId: string; name: NeighbourModel; model: NeighbourArrays }
  | { kind: 'factors'; tenantId: string; model: FactorArrays }
  | { kind: 'forget'; tenantId: string; identities: string[] }
  | { kind: 'item-removals'; tenantId: string; externalIds: string[] }
  | { kind: 'counts'; tenantId: string; name: CountsName; counts: SharedCounts }
  | { kind: 'histories'; tenantId: string; histories: SharedHistories }
  | { kind: 'vector-base'; tenantId: string; base: VectorBase }
  | { kind: 'vectors'; tenantId: string; externalIds: string[]; vectors: Float32Array; hashes: Uint32Array }
  | { kind: 'vector-removals'; tenantId: string; items: number[] };

/**
 * Interactions as a history reads them, column by column: copying a message costs per object and per
 * key, and a batch of events as objects was among the most expensive parts of ingestion (bench/ingest).
 */
export interface HistoryRows {
  itemIds: string[];
  /** The userId, else the sessionId; null for neither. */
  identities: (string | null)[];
  countries: (string | null)[];
  /** TYPE_CODES. */
  types: number[];
  ts: number[];
  weights: number[];
  /** 1 for a copy made by an identity merge. */
  merged: number[];
  /** The index of the identity's history in the shared memory of histories (-1: none). */
  indexes: number[];
}

function historyRows(): HistoryRows {
  return {
    itemIds: [],
    identities: [],
    countries: [],
    types: [],
    ts: [],
    weights: [],
    merged: [],
    indexes: [],
  };
}

/** A factor model as plain data, for the same reason. */
export type FactorArrays = { [K in keyof ServingFactors]: ServingFactors[K] };

export interface StateChangeListener {
  /** The log went from empty to holding changes. */
  pending(): void;
  /** The log holds many rows: loading a store must not keep millions of them waiting. */
  full(): void;
}

/** Rows (items, interactions) the log holds before it says it is full. */
export const FULL_ROWS = 16_384;

/** The changes of a serving state since they were last taken; consecutive rows of one kind share a change. */
export class StateChangeLog {
  private changes: StateChange[] = [];
  private rows = 0;

  constructor(private readonly listener: StateChangeListener) {}

  record(change: StateChange): void {
    if (this.changes.length === 0) this.listener.pending();
    this.changes.push(change);
  }

  itemUpserted(tenantId: string, item: CatalogItem): void {
    const last = this.changes.at(-1);
    if (last?.kind === 'items' && last.tenantId === tenantId) last.items.push(item);
    else this.record({ kind: 'items', tenantId, items: [item] });
    this.counted();
  }

  /** An interaction of type `type` (TYPE_CODES) joined the histories and counters. */
  interactionRecorded(
    tenantId: string,
    event: StoredInteraction,
    type: number,
    now: number,
    index: number,
  ): void {
    const last = this.changes.at(-1);
    let rows: HistoryRows;
    if (last?.kind === 'interactions' && last.tenantId === tenantId && last.now === now) rows = last.rows;
    else this.record({ kind: 'interactions', tenantId, now, rows: (rows = historyRows()) });
    rows.itemIds.push(event.itemId);
    rows.identities.push(event.userId ?? event.sessionId);
    rows.countries.push(event.country);
    rows.types.push(type);
    rows.ts.push(event.ts);
    rows.weights.push(event.weight);
    rows.merged.push(event.merged === true ? 1 : 0);
    rows.indexes.push(index);
    this.counted();
  }

  /** The changes held, oldest first; the log is empty afterwards. */
  take(): StateChange[] {
    const changes = this.changes;
    this.changes = [];
    this.rows = 0;
    return changes;
  }

  private counted(): void {
    if (++this.rows === FULL_ROWS) this.listener.full();
  }
}

export function neighbourArrays(model: ItemNeighbours): NeighbourArrays {
  const { offsets, neighbours, weights, interactionCount, builtAt, reach, compact } = model;
  return { offsets, neighbours, weights, interactionCount, builtAt, reach, compact };
}

export function itemNeighboursOf(arrays: NeighbourArrays): ItemNeighbours {
  const { offsets, neighbours, weights, interactionCount, builtAt, reach, compact } = arrays;
  return new ItemNeighbours(offsets, neighbours, weights, interactionCount, builtAt, { reach, compact });
}

export function servingFactorsOf(m: FactorArrays): ServingFactors {
  return new ServingFactors(
    m.k,
    m.itemFactors,
    m.known,
    m.itemGram,
    m.regularization,
    m.alpha,
    m.interactionCount,
    m.builtAt,
  );
}

export function factorArrays(model: ServingFactors): FactorArrays {
  const { k, itemFactors, known, itemGram, regularization, alpha, interactionCount, builtAt, size } = model;
  return { k, itemFactors, known, itemGram, regularization, alpha, interactionCount, builtAt, size };
}
