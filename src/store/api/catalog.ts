import type { StoredItem, StoredUser } from '../rows.js';

export interface Page<T> {
  rows: T[];
  /** How many rows there are in all. */
  total: number;
}

/** What the daemon reads of a tenant's catalog (items and users) beyond its serving state. */
export interface CatalogReads {
  /** One page (numbered from 1) of the tenant's items in external-id order. */
  listItems(tenantId: string, page: number, limit: number): Promise<Page<StoredItem>>;
  /** One page (numbered from 1) of the tenant's users in external-id order. */
  listUsers(tenantId: string, page: number, limit: number): Promise<Page<StoredUser>>;
}

/** What removing items took from the store. */
export interface RemovedItems {
  /** Item rows removed. */
  items: number;
  /** Rows of any kind that named one of the items: removed, or (impressions) rewritten without them. */
  rows: number;
  /** The event ids of the interactions removed. */
  interactionEventIds: string[];
  /** The event ids of the impressions removed. */
  impressionEventIds: string[];
}

/** The catalog's area of the store: its reads, and the removal of items (docs/guide.md, "Deleting items"). */
export interface CatalogStore extends CatalogReads {
  /**
   * Removes the items from the store in one transaction: the item rows, their interactions and item
   * keys; an impression keeps the other items it showed (in order) and goes when it showed none of the
   * others. It runs alone, after the writes queued before the call and before any queued after it, and
   * calls `committed` once the removal committed, still before any later write, so that what serves the
   * items goes before a later write is built; `committed`'s value is the answer. With no ids nothing is
   * removed, and `committed` is called in turn all the same.
   */
  removeItems<T>(
    tenantId: string,
    itemIds: readonly string[],
    committed: (removed: RemovedItems) => T,
  ): Promise<T>;
}
