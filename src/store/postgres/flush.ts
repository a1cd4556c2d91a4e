import type pg from 'pg';
import { identityHash, identityOf } from '../identity-hash.js';
import type { RowBuffer, StoredImpression, StoredInteraction, StoredItem, StoredUser } from '../rows.js';
import { changeLogStatement, type Change } from './change-log.js';
import { numberEvents, type EventNumbers } from './event-numbers.js';
import type { Statement } from './statement.js';
import { statementsOf } from './statements.js';
import { inTransaction, runStatements } from './transaction.js';

/** Events of the flush not stored because their tenant's table already held their event id. */
export interface FlushOutcome {
  skippedInteractions: number;
  skippedImpressions: number;
}

interface Column<R> {
  name: string;
  /** The column's PostgreSQL type: the flush binds an array of it. */
  type: string;
  /** The value of the flush's `index`-th row of the table. */
  value: (tenantId: string, row: R, index: number) => unknown;
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
  let index = 0;
  for (const [tenantId, row] of rows) {
    columns.forEach((column, i) => values[i].push(column.value(tenantId, row, index)));
    index++;
  }
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

/** The columns of a flush's interactions, with the numbers the flush took (event-numbers.ts). */
function interactionColumns(numbers: EventNumbers): Column<StoredInteraction>[] {
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
    { name: 'seq', type: 'bigint', value: (_t, _e, i) => numbers.interactionSeqs[i] },
    { name: 'merged', type: 'boolean', value: (_, e) => e.merged === true },
    { name: 'recomm_id', type: 'text', value: (_, e) => e.recommId ?? null },
    { name: 'item_key', type: 'integer', value: (_t, _e, i) => numbers.interactionKeys[i] },
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

/** The columns of a flush's impressions, with the numbers the flush took (event-numbers.ts). */
function impressionColumns(numbers: EventNumbers): Column<StoredImpression>[] {
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
    { name: 'seq', type: 'bigint', value: (_t, _e, i) => numbers.impressionSeqs[i] },
    {
      name: 'item_keys',
      type: 'json',
      value: (_t, _e, i) => JSON.stringify(numbers.impressionKeys[i]),
      stored: listOf('item_keys', 'integer'),
    },
  ];
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
 * first the events' sequence numbers and item keys, taken from their tenants' counters (event-numbers.ts),
 * whose rows stay locked until the commit; then item and user upserts, interactions and impressions (one
 * statement per table, an event id the tenant holds already is left out), then the flush's operations in
 * order; and, last, `changes` to each tenant's change log (change-log.ts). A statement that fails rolls
 * the whole flush back, numbers and keys with it.
 */
export async function writeFlush(
  client: pg.ClientBase,
  rows: RowBuffer,
  changes: ReadonlyMap<string, readonly Change[]> = new Map(),
): Promise<FlushOutcome> {
  const outcome: FlushOutcome = { skippedInteractions: 0, skippedImpressions: 0 };
  await inTransaction(client, async () => {
    // First: every writer of a tenant's events takes its counters before any row (items included), so
    // that two daemons' flushes, and a removal of items, lock in one order (event-numbers.ts).
    const numbers = await numberEvents(client, rows);
    if (rows.items.size > 0) {
      const items = valuesOf(inKeyOrder(rows.items));
      await client.query(insertion('items', ITEM_COLUMNS, items, replacing(REPLACE_BY_ID, ITEM_COLUMNS)));
    }
    if (rows.users.size > 0) {
      const users = valuesOf(inKeyOrder(rows.users));
      await client.query(insertion('users', USER_COLUMNS, users, replacing(REPLACE_BY_ID, USER_COLUMNS)));
    }
    if (rows.interactions.length > 0) {
      const columns = interactionColumns(numbers);
      const insert = insertion('interactions', columns, rows.interactions, FIRST_OF_EVENT_ID);
      outcome.skippedInteractions = rows.interactions.length - ((await client.query(insert)).rowCount ?? 0);
    }
    if (rows.impressions.length > 0) {
      const columns = impressionColumns(numbers);
      const insert = insertion('impressions', columns, rows.impressions, FIRST_OF_EVENT_ID);
      outcome.skippedImpressions = rows.impressions.length - ((await client.query(insert)).rowCount ?? 0);
    }
    await runStatements(client, rows.ops.flatMap(statementsOf));
    // Last: the counter row of each tenant's change log stays locked until the commit (change-log.ts).
    for (const [tenantId, tenantChanges] of inKeyOrder(changes))
      if (tenantChanges.length > 0) await client.query(changeLogStatement(tenantId, tenantChanges));
  });
  return outcome;
}
