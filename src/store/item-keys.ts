import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';

/** A key given to an item for the first time, which `item_keys` must store with the events naming it. */
export type FreshKey = readonly [tenantId: string, itemId: string, key: number];

/** Appends the columns of an `item_keys` row, in order, to an appender of the table (not ending the row). */
export function appendItemKey(appender: DuckDBAppender, [tenantId, itemId, key]: FreshKey): void {
  appender.appendVarchar(tenantId);
  appender.appendVarchar(itemId);
  appender.appendInteger(key);
}

/** A tenant's keys, and the next one to give. */
interface TenantKeys {
  ids: Map<string, number>;
  next: number;
}

/**
 * Each tenant's item ids under integer keys (0, 1, 2, ... per tenant, in the order events first named
 * them), which interactions (`item_key`) and impressions (`item_keys`) store beside the ids: analytics
 * group and join events by item, and DuckDB does that several times faster on integers than on text
 * (docs/guide.md, "Analytics and experiments").
 * The write queue gives the keys as it commits events and writes the new ones to `item_keys` in the same
 * transaction, so a key is durable exactly when the first event that uses it is.
 */
export class ItemKeys {
  private readonly byTenant = new Map<string, TenantKeys>();
  /** Keys given since the last `committed` or `rolledBack`, in the order they were given. */
  private fresh: FreshKey[] = [];
  /** The tenant `tenant` returned last, and its keys. */
  private lastTenant: string | undefined;
  private lastKeys: TenantKeys | undefined;

  /** The key of an item id, given now (and kept as fresh) if the tenant had none for it. */
  keyOf(tenantId: string, itemId: string): number {
    const keys = this.tenant(tenantId);
    let key = keys.ids.get(itemId);
    if (key === undefined) {
      key = keys.next++;
      keys.ids.set(itemId, key);
      this.fresh.push([tenantId, itemId, key]);
    }
    return key;
  }

  private tenant(tenantId: string): TenantKeys {
    // A flush's events are mostly one tenant's: the last one asked for is kept at hand.
    if (tenantId === this.lastTenant) return this.lastKeys!;
    let keys = this.byTenant.get(tenantId);
    if (keys === undefined) {
      keys = { ids: new Map(), next: 0 };
      this.byTenant.set(tenantId, keys);
    }
    this.lastTenant = tenantId;
    this.lastKeys = keys;
    return keys;
  }

  /** The keys given since the last commit or rollback, which the transaction must store. */
  get uncommitted(): readonly FreshKey[] {
    return this.fresh;
  }

  /** The transaction that stored the fresh keys committed: they are the tenant's for good. */
  committed(): void {
    this.fresh = [];
  }

  /** The transaction rolled back: its fresh keys are forgotten, to be given again. */
  rolledBack(): void {
    // Fresh keys are each tenant's newest: the first one forgotten is where the tenant's keys resume.
    for (const [tenantId, itemId, key] of this.fresh.toReversed()) {
      const keys = this.tenant(tenantId);
      keys.ids.delete(itemId);
      keys.next = key;
    }
    this.fresh = [];
  }

  /**
   * Forgets the keys of deleted items (their `item_keys` rows are deleted in the same task): an item of
   * the same id named by a later event gets a new key. Only between transactions, when no key is fresh.
   */
  forget(tenantId: string, itemIds: Iterable<string>): void {
    const keys = this.byTenant.get(tenantId);
    if (keys === undefined) return;
    for (const itemId of itemIds) keys.ids.delete(itemId);
  }

  /** Item ids with a key, over all tenants. */
  get size(): number {
    let size = 0;
    for (const keys of this.byTenant.values()) size += keys.ids.size;
    return size;
  }

  /** The keys the store holds, read a chunk at a time (at start). */
  static async load(connection: DuckDBConnection): Promise<ItemKeys> {
    const itemKeys = new ItemKeys();
    const result = await connection.stream('SELECT tenant_id, item_id, item_key FROM item_keys');
    for await (const chunk of result.yieldRowsJs()) {
      for (const [tenantId, itemId, key] of chunk) {
        const keys = itemKeys.tenant(String(tenantId));
        keys.ids.set(String(itemId), Number(key));
        keys.next = Math.max(keys.next, Number(key) + 1);
      }
    }
    return itemKeys;
  }
}
