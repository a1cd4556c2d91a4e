import type pg from 'pg';
import { identityHash, identityOf } from '../identity-hash.js';
import type { RowBuffer, StoredImpression, StoredInteraction, StoredItem, StoredUser } from '../rows.js';
import type { StoreChange } from '../api/changes.js';
import { codePoints, hashesOf, logChanges } from './change-log.js';
import { numberEvents, type EventNumbers } from './event-numbers.js';
import type { Statement } from './statement.js';
import { statementsOf } from './statements.js';
import { inTransaction, runStatements } from './transaction.js';

/** Events of the flush not stored because their tenant's table already held their event id. */
export interface FlushOutcome {
  skippedInteractions: number;
  skippedImpressions: number;
}

/** The `tenant_id, seq` of the rows an insertion stored (RETURNING), as keys of `stored`. */
function storedKeys(result: pg.QueryResult<unknown[]>): Set<string> {
  return new Set(result.rows.map(([tenantId, seq]) => `${String(tenantId)}\u0000${String(seq)}`));
}

/**
 * Marks the rows the insertion did not store (their event id was held) in `notStored`, and counts them.
 * Every row of the flush was given a seq number of its own (event-numbers.ts): the ones missing from
 * what the insertion returned are those left out.
 */
function markNotStored<E extends StoredInteraction | StoredImpression>(
  rows: readonly (readonly [string, E])[],
  seqs: readonly number[],
  result: pg.QueryResult<unknown[]>,
  notStored: Set<StoredInteraction | StoredImpression>,
): number {
  if ((result.rowCount ?? 0) === rows.length) return 0;
  const stored = storedKeys(result);
  let skipped = 0;
  rows.forEach(([tenantId, event], i) => {
    if (stored.has(`${tenantId}\u0000${seqs[i]}`)) return;
    notStored.add(event);
    skipped++;
  });
  return skipped;
}

/** The seq numbers `seqs` gives each tenant's rows of `rows`: the first and the last (they follow on). */
function seqRanges(
  rows: readonly (readonly [string, unknown])[],
  seqs: readonly number[],
): Map<string, { first: number; last: number }> {
  const ranges = new Map<string, { first: number; last: number }>();
  rows.forEach(([tenantId], i) => {
    const range = ranges.get(tenantId);
    if (range === undefined) ranges.set(tenantId, { first: seqs[i], last: seqs[i] });
    else range.last = seqs[i];
  });
  return ranges;
}

/**
 * What the flush changed, by tenant, as its followers read it (src/store/api/changes.ts): items and
 * users upserted, the seq numbers its events took, and its operations as they are, in the order the
 * flush writes them.
 */
function changesOf(rows: RowBuffer, numbers: EventNumbers): Map<string, StoreChange[]> {
  const changes = new Map<string, StoreChange[]>();
  // Identities the flush deletes: no change of it names them (change-log.ts, ERASE_IDENTITIES_FROM_LOG).
  const forgotten = new Set<string>();
  for (const op of rows.ops)
    if (op.area === 'identity' && op.op === 'forgetIdentities')
      for (const identity of op.identities) forgotten.add(`${op.tenantId}\u0000${identity}`);
  const named = (tenantId: string, id: string) => !forgotten.has(`${tenantId}\u0000${id}`);
  const add = (change: StoreChange) => {
    const list = changes.get(change.tenantId);
    if (list === undefined) changes.set(change.tenantId, [change]);
    else list.push(change);
  };
  const idsByTenant = (map: ReadonlyMap<string, readonly [string, { externalId: string }]>) => {
    const ids = new Map<string, string[]>();
    for (const [tenantId, row] of map.values()) {
      const list = ids.get(tenantId);
      if (list === undefined) ids.set(tenantId, [row.externalId]);
      else list.push(row.externalId);
    }
    return ids;
  };
  for (const [tenantId, itemIds] of idsByTenant(rows.items)) add({ kind: 'items', tenantId, itemIds });
  for (const [tenantId, ids] of idsByTenant(rows.users)) {
    const userIds = ids.filter((id) => named(tenantId, id));
    if (userIds.length > 0) add({ kind: 'users', tenantId, userIds });
  }
  for (const [tenantId, range] of seqRanges(rows.interactions, numbers.interactionSeqs))
    add({ kind: 'interactions', tenantId, ...range });
  for (const [tenantId, range] of seqRanges(rows.impressions, numbers.impressionSeqs))
    add({ kind: 'impressions', tenantId, ...range });
  for (const op of rows.ops) {
    if (op.area === 'sql') continue;
    if (op.area !== 'identity') add({ kind: 'op', tenantId: op.tenantId, op });
    else if (op.op === 'forgetIdentities')
      add({ kind: 'identities-forgotten', tenantId: op.tenantId, hashes: hashesOf(op.identities) });
    else if (named(op.tenantId, op.userId) && named(op.tenantId, op.sessionId))
      add({ kind: 'op', tenantId: op.tenantId, op });
  }
  return changes;
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

/** What an insertion of events returns of the rows it stored: which of the flush's rows they were. */
const RETURNING = ' RETURNING tenant_id, seq';

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
  return [...map].sort(([a], [b]) => codePoints(a, b));
}

const valuesOf = <V>(entries: [string, V][]): V[] => entries.map(([, value]) => value);

const REPLACE_BY_ID = 'tenant_id, external_id';

/**
 * Writes a flush of the write queue (RowBuffer) in one transaction, as the queue commits one to DuckDB:
 * first the events' sequence numbers and item keys, taken from their tenants' counters (event-numbers.ts),
 * whose rows stay locked until the commit; then item and user upserts, interactions and impressions (one
 * statement per table, an event id the tenant holds already is left out), then the flush's operations in
 * order; and, last, what it changed to each tenant's change log (change-log.ts), in the name of `origin`
 * (the store writing it). A statement that fails rolls the whole flush back, numbers and keys with it.
 * Once committed, `rows.notStored` holds the events left out.
 */
export async function writeFlush(client: pg.ClientBase, rows: RowBuffer, origin = ''): Promise<FlushOutcome> {
  const outcome: FlushOutcome = { skippedInteractions: 0, skippedImpressions: 0 };
  const notStored = new Set<StoredInteraction | StoredImpression>();
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
      const insert = insertion('interactions', columns, rows.interactions, FIRST_OF_EVENT_ID + RETURNING);
      const result = await client.query<unknown[]>({ ...insert, rowMode: 'array' });
      outcome.skippedInteractions = markNotStored(
        rows.interactions,
        numbers.interactionSeqs,
        result,
        notStored,
      );
    }
    if (rows.impressions.length > 0) {
      const columns = impressionColumns(numbers);
      const insert = insertion('impressions', columns, rows.impressions, FIRST_OF_EVENT_ID + RETURNING);
      const result = await client.query<unknown[]>({ ...insert, rowMode: 'array' });
      outcome.skippedImpressions = markNotStored(rows.impressions, numbers.impressionSeqs, result, notStored);
    }
    await runStatements(client, rows.ops.flatMap(statementsOf));
    // Last: the counter row of each tenant's change log stays locked until the commit (change-log.ts).
    await runStatements(client, logChanges(origin, changesOf(rows, numbers)));
  });
  for (const event of notStored) rows.notStored.add(event);
  return outcome;
}
