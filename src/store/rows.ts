import type { StoreOp } from './api/ops.js';

// Rows as they are stored; times are epoch milliseconds. Items and users are defined beside the documents
// the catalog routes show of them, in contract/catalog.ts.
import type { StoredItem, StoredUser } from '../contract/catalog.js';

export type { StoredItem, StoredUser };

export type InteractionType = 'view' | 'cart' | 'purchase' | 'rating' | 'bookmark';

export interface StoredInteraction {
  eventId: string | null;
  userId: string | null;
  sessionId: string | null;
  itemId: string;
  type: InteractionType;
  weight: number;
  scenarioSlug: string | null;
  country: string | null;
  ts: number;
  receivedAt: number;
  /** A copy of a session's event made by an identity merge. */
  merged?: boolean;
  /** The answer the event followed, when the client says so. */
  recommId?: string | null;
  /** Purchase and cart events: units (1 when not given), their total price and total profit. */
  amount?: number | null;
  price?: number | null;
  profit?: number | null;
}

export interface StoredImpression {
  eventId: string | null;
  userId: string | null;
  itemIds: string[];
  scenarioSlug: string | null;
  country: string | null;
  recommId: string | null;
  ts: number;
  receivedAt: number;
}

/** What one flush of the write queue commits, each row tagged with its tenant. */
export class RowBuffer {
  /** Keyed by tenant and external id: a later upsert of the same key in one flush replaces the earlier. */
  readonly items = new Map<string, [string, StoredItem]>();
  readonly users = new Map<string, [string, StoredUser]>();
  readonly interactions: [string, StoredInteraction][] = [];
  readonly impressions: [string, StoredImpression][] = [];
  /** Everything else the flush does, in the order its writes asked (src/store/api/ops.ts). */
  readonly ops: StoreOp[] = [];
  /**
   * Events of the flush the store did not store, their event id being held already (stored by another
   * daemon sharing the store meanwhile): filled once the flush committed, for the apply steps.
   */
  readonly notStored = new Set<StoredInteraction | StoredImpression>();

  /** Whether the committed flush stored the event (for an apply step: the flush committed). */
  stored(event: StoredInteraction | StoredImpression): boolean {
    return !this.notStored.has(event);
  }
}

export function rowKey(tenantId: string, externalId: string): string {
  return `${tenantId}\u0000${externalId}`;
}
