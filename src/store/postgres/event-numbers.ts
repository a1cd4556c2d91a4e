import type pg from 'pg';
import type { RowBuffer } from '../rows.js';

/**
 * The numbers a flush gives its events, as the write queue gives them on DuckDB (src/store/write-queue.ts,
 * item-keys.ts): each event the next sequence number of its tenant's table, and each item it names the
 * item's key (0, 1, 2, ... per tenant, in the order events first named the items). Daemons sharing the
 * database take them from the tenant's counters (migrations.ts, version 3) in the flush's transaction, so
 * they never give a number or a key twice. Index i of each list is the flush's i-th row of the table.
 */
export interface EventNumbers {
  interactionSeqs: number[];
  interactionKeys: number[];
  impressionSeqs: number[];
  impressionKeys: number[][];
}

/** What a flush asks of one tenant's counters. */
interface TenantDemand {
  interactions: number;
  impressions: number;
  /** The item ids its events name, in the order first named (interactions first, as on DuckDB). */
  itemIds: Set<string>;
}

/** Each tenant's item keys: tenant id → item id → key. */
type Keys = Map<string, Map<string, number>>;

/**
 * Locks the counters of the tenants whose events the flush holds and advances their seq numbers by as
 * many events, creating a tenant's counters with its first events. Tenants are locked in one order
 * (code points), so that two daemons' flushes of the same tenants wait for each other rather than
 * deadlock. The rows stay locked until the transaction ends: a second writer of the tenant (another
 * daemon, or a removal of items, catalog.ts) waits for this flush to commit, so seq numbers follow
 * commit order and the keys read below are all there are.
 */
const ADVANCE_SEQUENCES = `
  INSERT INTO event_counters AS c (tenant_id, interactions, impressions, item_keys)
  SELECT r.tenant_id, r.interactions, r.impressions, 0
    FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS r(tenant_id, interactions, impressions)
   ORDER BY r.tenant_id COLLATE "C"
  ON CONFLICT (tenant_id) DO UPDATE
     SET interactions = c.interactions + excluded.interactions,
         impressions = c.impressions + excluded.impressions
  RETURNING c.tenant_id, c.interactions::text, c.impressions::text`;

/** The keys `item_keys` holds of the pairs ($1[i], $2[i]) of tenant and item id. */
const HELD_KEYS = `
  SELECT k.tenant_id, k.item_id, k.item_key
    FROM unnest($1::text[], $2::text[]) AS w(tenant_id, item_id)
    JOIN item_keys AS k ON k.tenant_id = w.tenant_id AND k.item_id = w.item_id`;

/**
 * Gives the next keys of each tenant's counter to the items it had none for: tenant $1[i] takes $2[i]
 * keys; item $4[j] of tenant $3[j] the $5[j]-th of them (from 0). Stored in `item_keys` in the flush's
 * transaction, so a key is durable exactly when the first event using it is. An item whose key another
 * writer stored meanwhile keeps that key (ON CONFLICT DO NOTHING; read back by the caller).
 */
const GIVE_KEYS = `
  WITH given AS (
    UPDATE event_counters AS c SET item_keys = c.item_keys + r.count
      FROM unnest($1::text[], $2::integer[]) AS r(tenant_id, count)
     WHERE c.tenant_id = r.tenant_id
    RETURNING c.tenant_id, c.item_keys - r.count AS first)
  INSERT INTO item_keys (tenant_id, item_id, item_key)
  SELECT w.tenant_id, w.item_id, given.first + w.n
    FROM unnest($3::text[], $4::text[], $5::integer[]) AS w(tenant_id, item_id, n)
    JOIN given ON given.tenant_id = w.tenant_id
  ON CONFLICT (tenant_id, item_id) DO NOTHING
  RETURNING tenant_id, item_id, item_key`;

/** Takes the flush's numbers from the tenants' counters, in the transaction open on `client`. */
export async function numberEvents(client: pg.ClientBase, rows: RowBuffer): Promise<EventNumbers> {
  const demands = demandsOf(rows);
  if (demands.size === 0)
    return { interactionSeqs: [], interactionKeys: [], impressionSeqs: [], impressionKeys: [] };
  const tenants = [...demands.keys()];
  const advanced = await client.query<{ tenant_id: string; interactions: string; impressions: string }>(
    ADVANCE_SEQUENCES,
    [
      tenants,
      tenants.map((t) => demands.get(t)!.interactions),
      tenants.map((t) => demands.get(t)!.impressions),
    ],
  );
  // The first number of each tenant's events in this flush, advanced as they are given.
  const next = new Map<string, { interactions: number; impressions: number }>();
  for (const row of advanced.rows) {
    const demand = demands.get(row.tenant_id)!;
    next.set(row.tenant_id, {
      interactions: Number(row.interactions) - demand.interactions + 1,
      impressions: Number(row.impressions) - demand.impressions + 1,
    });
  }
  const keys = await itemKeys(client, demands);
  const keyOf = (tenantId: string, itemId: string) => keys.get(tenantId)!.get(itemId)!;
  return {
    interactionSeqs: rows.interactions.map(([tenantId]) => next.get(tenantId)!.interactions++),
    interactionKeys: rows.interactions.map(([tenantId, event]) => keyOf(tenantId, event.itemId)),
    impressionSeqs: rows.impressions.map(([tenantId]) => next.get(tenantId)!.impressions++),
    impressionKeys: rows.impressions.map(([tenantId, event]) =>
      event.itemIds.map((itemId) => keyOf(tenantId, itemId)),
    ),
  };
}

function demandsOf(rows: RowBuffer): Map<string, TenantDemand> {
  const demands = new Map<string, TenantDemand>();
  const demand = (tenantId: string) => {
    let found = demands.get(tenantId);
    if (found === undefined) {
      found = { interactions: 0, impressions: 0, itemIds: new Set() };
      demands.set(tenantId, found);
    }
    return found;
  };
  for (const [tenantId, event] of rows.interactions) {
    const tenant = demand(tenantId);
    tenant.interactions++;
    tenant.itemIds.add(event.itemId);
  }
  for (const [tenantId, event] of rows.impressions) {
    const tenant = demand(tenantId);
    tenant.impressions++;
    for (const itemId of event.itemIds) tenant.itemIds.add(itemId);
  }
  return demands;
}

interface KeyRow {
  tenant_id: string;
  item_id: string;
  item_key: number;
}

/** The (tenant, item) pairs the flush names that `keys` has no key of yet, as two lists for `unnest`. */
function unkeyed(demands: Map<string, TenantDemand>, keys: Keys): [string[], string[]] {
  const tenantIds: string[] = [];
  const itemIds: string[] = [];
  for (const [tenantId, demand] of demands) {
    const known = keys.get(tenantId)!;
    for (const itemId of demand.itemIds)
      if (!known.has(itemId)) {
        tenantIds.push(tenantId);
        itemIds.push(itemId);
      }
  }
  return [tenantIds, itemIds];
}

/** The key of every item the flush names: the one `item_keys` holds, or one given now. */
async function itemKeys(client: pg.ClientBase, demands: Map<string, TenantDemand>): Promise<Keys> {
  const keys: Keys = new Map([...demands.keys()].map((tenantId) => [tenantId, new Map()]));
  const keep = (result: pg.QueryResult<KeyRow>) => {
    for (const row of result.rows) keys.get(row.tenant_id)!.set(row.item_id, row.item_key);
  };
  keep(await client.query<KeyRow>(HELD_KEYS, unkeyed(demands, keys)));
  const [tenantIds, itemIds] = unkeyed(demands, keys);
  if (tenantIds.length > 0) {
    // Each tenant's new items numbered from 0 in the order first named, and how many each tenant takes.
    const counts = new Map<string, number>();
    const nth = tenantIds.map((tenantId) => {
      const n = counts.get(tenantId) ?? 0;
      counts.set(tenantId, n + 1);
      return n;
    });
    const given = [[...counts.keys()], [...counts.values()], tenantIds, itemIds, nth];
    keep(await client.query<KeyRow>(GIVE_KEYS, given));
    // An item whose key a writer that does not hold the tenant's counters stored meanwhile keeps it.
    const taken = unkeyed(demands, keys);
    if (taken[0].length > 0) keep(await client.query<KeyRow>(HELD_KEYS, taken));
  }
  const [lostTenant] = unkeyed(demands, keys);
  if (lostTenant.length > 0) throw new Error(`no key could be given to an item of tenant ${lostTenant[0]}`);
  return keys;
}
