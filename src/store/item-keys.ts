import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Each tenant's item ids under dense integer keys (0, 1, 2, ... per tenant), which interactions
 * (`item_key`) and impressions (`item_keys`) store beside the ids: analytics group and join events by
 * item, and DuckDB does that several times faster on integers than on text (README, "Analytics").
 * The write queue gives the keys as it commits events and writes the new ones to `item_keys` in the same
 * transaction, so a key is durable exactly when the first event that uses it is.
 */
export class ItemKeys {
  private readonly byTenant = new Map<string, Map<string, number>>();
  /** Keys given since the last `committed` or `rolledBack`, in the order they were given. */
  private fresh: [tenantId: string, itemId: string, key: number][] = [];

  /** The key of an item id, given now (and kept as fresh) if the tenant had none for it. */
  keyOf(tenantId: string, itemId: string): number {
    let keys = this.byTenant.get(tenantId);
    if (keys === undefined) {
      keys = new Map();
      this.byTenant.set(tenantId, keys);
    }
    let key = keys.get(itemId);
    if (key === undefined) {
      // Keys are dense and only the newest are ever forgotten (rolledBack), so the next is the count.
      key = keys.size;
      keys.set(itemId, key);
      this.fresh.push([tenantId, itemId, key]);
    }
    return key;
  }

  /** The keys given since the last commit or rollback, which the transaction must store. */
  get uncommitted(): readonly (readonly [string, string, number])[] {
    return this.fresh;
  }

  /** The transaction that stored the fresh keys committed: they are the tenant's for good. */
  committed(): void {
    this.fresh = [];
  }

  /** The transaction rolled back: its fresh keys are forgotten, to be given again. */
  rolledBack(): void {
    for (const [tenantId, itemId] of this.fresh) this.byTenant.get(tenantId)?.delete(itemId);
    this.fresh = [];
  }

  /** Item ids with a key, over all tenants. */
  get size(): number {
    let size = 0;
    for (const keys of this.byTenant.values()) size += keys.size;
    return size;
  }

  /** The keys the store holds, read a chunk at a time (at start). */
  static async load(connection: DuckDBConnection): Promise<ItemKeys> {
    const itemKeys = new ItemKeys();
    const result = await connection.stream(
      'SELECT tenant_id, item_id, item_key FROM item_keys ORDER BY tenant_id, item_key',
    );
    for await (const chunk of result.yieldRowsJs()) {
      for (const [tenantId, itemId, key] of chunk) {
        const tenant = String(tenantId);
        let keys = itemKeys.byTenant.get(tenant);
        if (keys === undefined) {
          keys = new Map();
          itemKeys.byTenant.set(tenant, keys);
        }
        if (Number(key) !== keys.size)
          throw new Error(
            `item_keys of tenant '${tenant}' are not dense: key ${String(key)} follows ${keys.size - 1}`,
          );
        keys.set(String(itemId), keys.size);
      }
    }
    return itemKeys;
  }
}
