import type { CatalogItem } from '../row-mapping.js';
import type { StoredInteraction, StoredUser } from '../rows.js';

/**
 * Rows of several tenants, a chunk at a time: `rows[i]` is of tenant `tenantIds[i]`. Streamed a chunk at a
 * time, since a whole table at once would leave the heap as large as it was, long after its rows are
 * garbage (docs/memory.md).
 */
export interface TenantChunk<T> {
  tenantIds: string[];
  rows: T[];
}

/** Every tenant's configuration documents of one kind, parsed. */
export interface StoredDocument {
  tenantId: string;
  document: unknown;
}

/** An identity merge the ledger recorded: `userId` took over the session's history. */
export interface StoredMerge {
  tenantId: string;
  userId: string;
  sessionId: string;
}

/**
 * What the daemon reads of every tenant to rebuild its serving state at start (src/state/load-state.ts),
 * beside the tenants themselves (TenantReads).
 */
export interface LoadReads {
  merges(): Promise<StoredMerge[]>;
  documents(kind: string): Promise<StoredDocument[]>;
  /** Every item, as the catalog holds it; a tenant's in the order they were created (then by id). */
  items(): AsyncIterable<TenantChunk<CatalogItem>>;
  users(): AsyncIterable<TenantChunk<StoredUser>>;
  /** How many interactions each tenant has stored (a tenant with none is left out). */
  interactionTotals(): Promise<{ tenantId: string; total: number }[]>;
  /** The event ids given with stored interactions. */
  interactionEventIds(): AsyncIterable<TenantChunk<string>>;
  /** The event ids given with stored impressions. */
  impressionEventIds(): AsyncIterable<TenantChunk<string>>;
  /**
   * The interactions still inside a window of the histories, in time order: those at or after `since`,
   * and purchases at or after `purchasesSince`. Only what a history keeps is read: their `eventId` and
   * `scenarioSlug` are null, `receivedAt` is `ts`, and no revenue is given.
   */
  windowedInteractions(since: number, purchasesSince: number): AsyncIterable<TenantChunk<StoredInteraction>>;
}
