import type { DuckDBConnection } from '@duckdb/node-api';
import { identityHash } from './identity-hash.js';

/**
 * Schema version 7 (see item-keys.ts and identity-hash.ts): the items events named so far get keys in id
 * order, and both event tables are copied, in their stored order, into tables that hold each event's item
 * keys beside its ids, and each interaction's identity hash. A copy rather than ALTER and UPDATE: DuckDB holds a whole-table UPDATE in memory, and rewrites
 * the rows of a list column it updates at the table's end, in no particular order. The copy goes a range
 * of sequence numbers at a time, so that its memory stays within the store's limit (docs/memory.md).
 */

/** Events copied at a time. */
const CHUNK = 100_000;

const INTERACTIONS = `
  tenant_id VARCHAR NOT NULL,
  event_id VARCHAR,
  user_id VARCHAR,
  session_id VARCHAR,
  item_id VARCHAR NOT NULL,
  type VARCHAR NOT NULL,
  weight DOUBLE NOT NULL,
  scenario_slug VARCHAR,
  country VARCHAR,
  ts BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  seq BIGINT,
  merged BOOLEAN DEFAULT false,
  recomm_id VARCHAR,
  item_key INTEGER NOT NULL,
  identity_hash BIGINT NOT NULL`;

const IMPRESSIONS = `
  tenant_id VARCHAR NOT NULL,
  event_id VARCHAR,
  user_id VARCHAR,
  item_ids VARCHAR[] NOT NULL,
  scenario_slug VARCHAR,
  country VARCHAR,
  recomm_id VARCHAR,
  ts BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  seq BIGINT,
  item_keys INTEGER[] NOT NULL`;

/** The rows of each copy, from the events in `events` (a filter of the old table). */
const COPIES = {
  interactions: (events: string) => `
    SELECT e.*, k.item_key, h.identity_hash FROM (SELECT * FROM interactions WHERE ${events}) e
      JOIN item_keys k USING (tenant_id, item_id)
      JOIN temp.identity_hashes h ON h.identity = coalesce(e.user_id, e.session_id, '')
     ORDER BY e.seq`,
  impressions: (events: string) => `
    WITH shown AS (
        SELECT seq, tenant_id, unnest(item_ids) AS item_id, generate_subscripts(item_ids, 1) AS position
          FROM impressions WHERE ${events}),
      keyed AS (
        SELECT seq, list(k.item_key ORDER BY position) AS item_keys
          FROM shown JOIN item_keys k USING (tenant_id, item_id) GROUP BY seq)
    SELECT e.*, coalesce(keyed.item_keys, []) FROM (SELECT * FROM impressions WHERE ${events}) e
      LEFT JOIN keyed USING (seq)
     ORDER BY e.seq`,
};

export const ITEM_KEYS_SCHEMA =
  'CREATE TABLE item_keys (tenant_id VARCHAR NOT NULL, item_id VARCHAR NOT NULL, item_key INTEGER NOT NULL)';

/** Runs inside the migration's transaction. */
export async function keyItemsOfEvents(connection: DuckDBConnection): Promise<void> {
  await connection.run(ITEM_KEYS_SCHEMA);
  await connection.run(`INSERT INTO item_keys
    SELECT tenant_id, item_id, (row_number() OVER (PARTITION BY tenant_id ORDER BY item_id) - 1)::INTEGER
      FROM (SELECT tenant_id, item_id FROM interactions UNION SELECT tenant_id, unnest(item_ids) FROM impressions)`);
  await copyKeyed(connection, 'interactions', INTERACTIONS);
  await copyKeyed(connection, 'impressions', IMPRESSIONS);
}

/** Fills temp.identity_hashes with the hashes of the identities of the interactions in `events`. */
async function hashIdentities(connection: DuckDBConnection, events: string): Promise<void> {
  await connection.run(
    'CREATE OR REPLACE TEMP TABLE identity_hashes (identity VARCHAR NOT NULL, identity_hash BIGINT NOT NULL)',
  );
  const identities = await connection.stream(
    `SELECT DISTINCT coalesce(user_id, session_id, '') FROM interactions WHERE ${events}`,
  );
  const appender = await connection.createAppender('identity_hashes', 'main', 'temp');
  try {
    for await (const chunk of identities.yieldRowsJs()) {
      for (const [identity] of chunk) {
        appender.appendVarchar(String(identity));
        appender.appendBigInt(identityHash(String(identity)));
        appender.endRow();
      }
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

async function copyKeyed(
  connection: DuckDBConnection,
  table: 'interactions' | 'impressions',
  columns: string,
): Promise<void> {
  const copy = `${table}_keyed`;
  await connection.run(`CREATE TABLE ${copy} (${columns})`);
  const bounds = await connection.runAndReadAll(`SELECT min(seq), max(seq) FROM ${table}`);
  const [low, high] = bounds.getRowsJS()[0];
  if (low !== null && high !== null) {
    for (let from = Number(low); from <= Number(high); from += CHUNK) {
      const events = `seq >= ${from} AND seq < ${from + CHUNK}`;
      if (table === 'interactions') await hashIdentities(connection, events);
      await connection.run(`INSERT INTO ${copy} ${COPIES[table](events)}`);
    }
  }
  // Every event has had a sequence number since version 2: the copy holds them all.
  const counts = await connection.runAndReadAll(
    `SELECT (SELECT count(*) FROM ${table}), (SELECT count(*) FROM ${copy})`,
  );
  const [events, copied] = counts.getRowsJS()[0].map(Number);
  if (events !== copied) throw new Error(`${table}: ${copied} of ${events} events copied with item keys`);
  await connection.run(`DROP TABLE ${table}`);
  await connection.run(`ALTER TABLE ${copy} RENAME TO ${table}`);
}
