import type pg from 'pg';
import { identityHash, identityOf } from '../identity-hash.js';
import type { ItemKeys } from '../item-keys.js';
import type { RowBuffer, StoredImpression, StoredInteraction, StoredItem, StoredUser } from '../rows.js';
import type { EventSequences } from '../write-queue.js';
import { changeLogStatement, type Change } from './change-log.js';
import type { Statement } from './statement.js';
import { statementsOf } from './statements.js';
import { inTransaction, runStatements } from './transaction.js';

/**
 * The numbers a flush gives its events, as the write queue gives them on DuckDB (src/store/write-queue.ts):
 * each event the next sequence number of its table, and each item it names the item's key (a key given
 * now is stored in `item_keys` in the flush's transaction, src/store/item-keys.ts).
 */
export interface EventNumbering {
  /** The last number given in each table; the flush advances it (a rolled-back flush leaves a gap). */
  sequences: EventSequences;
  itemKeys: ItemKeys;
}

/** Events of the flush not stored because their tenant's table already held their event id. */
export interface FlushOutcome {
  skippedInteractions: number;
  skippedImpressions: number;
}

interface Column<R> {
  name: string;
  /** The column's PostgreSQL type: the flush binds an array of it. */
  type: string;
  value: (tenantId: string, row: R) => unknown;
  /** The stored value, when it is not the bound one: SQL over `r.<name>`. */
  stored?: string;
}

/**
 * One statement for any number of rows, so that the text (and its plan) does not grow with the flush:
 * one array per column, taken apart row by row with `unnest` (binds as many values as there are columns).
 */
function insertion<R>(
  table: string,
  columns: readonly Column<R>[],
  rows: Iterable<readonly [string, R]>,
  onConflict: string,
): Statement {
  const names = columns.map((column) => column.name).join(', ');
  const arrays = columns.map((column, i) => `$${i + 1}::${column.type}[]`).join(', ');
  const select = columns.map((column) => column.stored ?? `r.${column.name}`).join(', ');
  const values = columns.map((): unknown[] => []);
  for (const [tenantId, row] of rows)
    columns.forEach((column, i) => values[i].push(column.value(tenantId, row)));
  return {
    text: `INSERT INTO ${table} (${names}) SELECT ${select} FROM unnest(${arrays}) AS r(${names}) ${onConflict}`,
    values,
  };
}

/** ON CONFLICT ... DO UPDATE of every column but the key: a later upsert replaces the row, as on DuckDB. */
function replacing<R>(key: string, columns: readonly Column<R>[]): string {
  const keyColumns = key.split(', ');
  const set = columns
    .filter((column) => !keyColumns.includes(column.name))
    .map((column) => `${column.name} = excluded.${column.name}`);
  return `ON CONFLICT (${key}) DO UPDATE SET ${set.join(', ')}`;
}

/** An event whose id its tenant's table holds already is left out (migrations.ts, version 1). */
const FIRST_OF_EVENT_ID = 'ON CONFLICT (tenant_id, event_id) WHERE event_id IS NOT NULL DO NOTHING';

const tenant = { name: 'tenant_id', type: 'text', value: (tenantId: string) => tenantId };

const ITEM_COLUMNS: Column<StoredItem>[] = [
  tenant,
  { name: 'external_id', type: 'text', value: (_, item) => item.externalId },
  { name: 'category', type: 'text', value: (_, item) => item.category },
  // Bound as JSON text and stored as written (a `json` column, migrations.ts).
  { name: 'attributes', type: 'json', value: (_, item) => JSON.stringify(item.attributes) },
  { name: 'expires_at', type: 'text', value: (_, item) => item.expiresAt },
  { name: 'available', type: 'boolean', value: (_, item) => item.available },
  { name: 'feed_managed', type: 'boolean', value: (_, item) => item.feedManaged },
  { name: 'created_at', type: 'bigint', value: (_, item) => item.createdAt },
  { name: 'updated_at', type: 'bigint', value: (_, item) => item.updatedAt },
];

const USER_COLUMNS: Column<StoredUser>[] = [
  tenant,
  { name: 'external_id', type: 'text', value: (_, user) => user.externalId },
  { name: 'attributes', type: 'json', value: (_, user) => JSON.stringify(user.attributes) },
  { name: 'created_at', type: 'bigint', value: (_, user) => user.createdAt },
  { name: 'updated_at', type: 'bigint', value: (_, user) => user.updatedAt },
];

/** The columns of a flush's interactions; `seq` and `item_key` are given as the rows are bound. */
function interactionColumns(numbering: EventNumbering): Column<StoredInteraction>[] {
  return [
    tenant,
    { name: 'event_id', type: 'text', value: (_, e) => e.eventId },
    { name: 'user_id', type: 'text', value: (_, e) => e.userId },
    { name: 'session_id', type: 'text', value: (_, e) => e.sessionId },
    { name: 'item_id', type: 'text', value: (_, e) => e.itemId },
    { name: 'type', type: 'text', value: (_, e) => e.type },
    { name: 'weight', type: 'double precision', value: (_, e) => e.weight },
    { name: 'scenario_slug', type: 'text', value: (_, e) => e.scenarioSlug },
    { name: 'country', type: 'text', value: (_, e) => e.country },
    { name: 'ts', type: 'bigint', value: (_, e) => e.ts },
    { name: 'received_at', type: 'bigint', value: (_, e) => e.receivedAt },
    { name: 'seq', type: 'bigint', value: () => ++numbering.sequences.interactions },
    { name: 'merged', type: 'boolean', value: (_, e) => e.merged === true },
    { name: 'recomm_id', type: 'text', value: (_, e) => e.recommId ?? null },
    { name: 'item_key', type: 'integer', value: (t, e) => numbering.itemKeys.keyOf(t, e.itemId) },
    { name: 'identity_hash', type: 'bigint', value: (_, e) => identityHash(identityOf(e)).toString() },
    { name: 'amount', type: 'double precision', value: (_, e) => e.amount ?? null },
    { name: 'price', type: 'double precision', value: (_, e) => e.price ?? null },
    { name: 'profit', type: 'double precision', value: (_, e) => e.profit ?? null },
  ];
}

/**
 * A list of each row binds as JSON text: a PostgreSQL array of arrays must be rectangular, and `unnest`
 * would flatten it. The stored list is the JSON array's elements in order.
 */
function listOf(column: string, type: string): string {
  return `ARRAY(SELECT e.v::${type} FROM json_array_elements_text(r.${column}) WITH ORDINALITY AS e(v, n) ORDER BY e.n)`;
}

/** The columns of a flush's impressions; `seq` and `item_keys` are given as the rows are bound. */
function impressionColumns(numbering: EventNumbering): Column<StoredImpression>[] {
  return [
    tenant,
    { name: 'event_id', type: 'text', value: (_, e) => e.eventId },
    { name: 'user_id', type: 'text', value: (_, e) => e.userId },
    {
      name: 'item_ids',
      type: 'json',
      value: (_, e) => JSON.stringify(e.itemIds),
      stored: listOf('item_ids', 'text'),
    },
    { name: 'scenario_slug', type: 'text', value: (_, e) => e.scenarioSlug },
    { name: 'country', type: 'text', value: (_, e) => e.country },
    { name: 'recomm_id', type: 'text', value: (_, e) => e.recommId },
    { name: 'ts', type: 'bigint', value: (_, e) => e.ts },
    { name: 'received_at', type: 'bigint', value: (_, e) => e.receivedAt },
    { name: 'seq', type: 'bigint', value: () => ++numbering.sequences.impressions },
    {
      name: 'item_keys',
      type: 'json',
      value: (t, e) => JSON.stringify(e.itemIds.map((itemId) => numbering.itemKeys.keyOf(t, itemId))),
      stored: listOf('item_keys', 'integer'),
    },
  ];
}

/** The item keys given since the last commit: stored with the first events that use them. */
function freshKeys(itemKeys: ItemKeys): Statement {
  const keys = itemKeys.uncommitted;
  return {
    text: 'INSERT INTO item_keys SELECT * FROM unnest($1::text[], $2::text[], $3::integer[])',
    values: [keys.map((key) => key[0]), keys.map((key) => key[1]), keys.map((key) => key[2])],
  };
}

/**
 * The entries in the order of their keys. Two daemons' transactions that lock the same rows (upserts of
 * the same items, changes of the same tenants) lock them in one order: one waits for the other rather
 * than each for the other (a deadlock, which PostgreSQL breaks by failing one).
 */
function inKeyOrder<V>(map: ReadonlyMap<string, V>): [string, V][] {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const valuesOf = <V>(entries: [string, V][]): V[] => entries.map(([, value]) => value);

const REPLACE_BY_ID = 'tenant_id, external_id';

/**
 * Writes a flush of the write queue (RowBuffer) in one transaction, as the queue commits one to DuckDB:
 * item and user upserts, interactions and impressions (one statement per table, an event id the tenant
 * holds already is left out), the item keys given to them, then the flush's operations in order; and,
 * last, `changes` to each tenant's change log (change-log.ts). A statement that fails rolls the whole
 * flush back, and the item keys it gave are given again (ItemKeys.rolledBack).
 */
export async function writeFlush(
  client: pg.ClientBase,
  rows: RowBuffer,
  numbering: EventNumbering,
  changes: ReadonlyMap<string, readonly Change[]> = new Map(),
): Promise<FlushOutcome> {
  const outcome: FlushOutcome = { skippedInteractions: 0, skippedImpressions: 0 };
  try {
    await inTransaction(client, async () => {
      if (rows.items.size > 0) {
        const items = valuesOf(inKeyOrder(rows.items));
        await client.query(insertion('items', ITEM_COLUMNS, items, replacing(REPLACE_BY_ID, ITEM_COLUMNS)));
      }
      if (rows.users.size > 0) {
        const users = valuesOf(inKeyOrder(rows.users));
        await client.query(insertion('users', USER_COLUMNS, users, replacing(REPLACE_BY_ID, USER_COLUMNS)));
      }
      if (rows.interactions.length > 0) {
        const columns = interactionColumns(numbering);
        const insert = insertion('interactions', columns, rows.interactions, FIRST_OF_EVENT_ID);
        outcome.skippedInteractions = rows.interactions.length - ((await client.query(insert)).rowCount ?? 0);
      }
      if (rows.impressions.length > 0) {
        const columns = impressionColumns(numbering);
        const insert = insertion('impressions', columns, rows.impressions, FIRST_OF_EVENT_ID);
        outcome.skippedImpressions = rows.impressions.length - ((await client.query(insert)).rowCount ?? 0);
      }
      if (numbering.itemKeys.uncommitted.length > 0) await client.query(freshKeys(numbering.itemKeys));
      await runStatements(client, rows.ops.flatMap(statementsOf));
      // Last: the counter row of each tenant stays locked until the commit (change-log.ts).
      for (const [tenantId, tenantChanges] of inKeyOrder(changes))
        if (tenantChanges.length > 0) await client.query(changeLogStatement(tenantId, tenantChanges));
    });
  } catch (error) {
    numbering.itemKeys.rolledBack();
    throw error;
  }
  numbering.itemKeys.committed();
  return outcome;
}
