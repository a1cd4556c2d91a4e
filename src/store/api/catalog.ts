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
