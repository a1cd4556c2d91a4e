import type pg from 'pg';
import { SchemaTooNewError } from '../migrations.js';

/**
 * The PostgreSQL store's schema, as an append-only list applied like DuckDB's (src/store/migrations.ts):
 * each version in its own transaction, recorded in `schema_migrations`; a database with a version this
 * binary does not know is refused. PostgreSQL's list starts from DuckDB's version 9: a database begins
 * empty, so DuckDB's history of ALTERs and copies is one CREATE per table here, with the columns in
 * DuckDB's order.
 *
 * Types: times are epoch milliseconds (bigint), as in DuckDB. Every text column compares and sorts by
 * code point (`COLLATE "C"`), as DuckDB's text does, whatever the database's locale: pages of items in
 * external-id order, and ties broken by id, come out as they do on DuckDB. Documents the store gives back
 * as it took them (item and user attributes, which the serving state keeps as JSON text, and
 * configuration documents, which answers show) are `json`, which keeps the text as written; `jsonb`
 * would reorder keys and change what answers show. The change log, which only daemons read, is `jsonb`.
 *
 * DuckDB's `log_marks` has no counterpart: the local logs (src/store/event-log.ts, record-log.ts) make a
 * write durable on the daemon's disk before the store holds it, but on PostgreSQL a write is
 * acknowledged once its transaction committed there, so that another daemon can take the next write of
 * the tenant (docs/guide.md, "Ingestion": a 2xx is never lost): nothing is moved into the store later.
 */
export interface PostgresMigration {
  version: number;
  description: string;
  statements: readonly string[];
}

const TEXT = 'text COLLATE "C"';

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    description: "the store's tables, as DuckDB's schema version 9 has them",
    statements: [
      `CREATE TABLE tenants (
        tenant_id ${TEXT} PRIMARY KEY,
        created_at bigint NOT NULL
      )`,
      `CREATE TABLE credentials (
        tenant_id ${TEXT} NOT NULL,
        kind ${TEXT} NOT NULL,
        secret_hash ${TEXT} NOT NULL,
        salt ${TEXT} NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, kind)
      )`,
      `CREATE TABLE items (
        tenant_id ${TEXT} NOT NULL,
        external_id ${TEXT} NOT NULL,
        category ${TEXT},
        attributes json,
        expires_at ${TEXT},
        available boolean NOT NULL,
        feed_managed boolean NOT NULL,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, external_id)
      )`,
      `CREATE TABLE users (
        tenant_id ${TEXT} NOT NULL,
        external_id ${TEXT} NOT NULL,
        attributes json,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, external_id)
      )`,
      // seq: the event's number in commit order (the lake exports ranges of them, docs/batch-models.md);
      // merged: a copy made by an identity merge (docs/guide.md, "Identity"); item_key and identity_hash:
      // src/store/item-keys.ts and identity-hash.ts; amount, price, profit: docs/guide.md, "Revenue".
      `CREATE TABLE interactions (
        tenant_id ${TEXT} NOT NULL,
        event_id ${TEXT},
        user_id ${TEXT},
        session_id ${TEXT},
        item_id ${TEXT} NOT NULL,
        type ${TEXT} NOT NULL,
        weight double precision NOT NULL,
        scenario_slug ${TEXT},
        country ${TEXT},
        ts bigint NOT NULL,
        received_at bigint NOT NULL,
        seq bigint NOT NULL,
        merged boolean DEFAULT false,
        recomm_id ${TEXT},
        item_key integer NOT NULL,
        identity_hash bigint NOT NULL,
        amount double precision,
        price double precision,
        profit double precision
      )`,
      `CREATE TABLE impressions (
        tenant_id ${TEXT} NOT NULL,
        event_id ${TEXT},
        user_id ${TEXT},
        item_ids text[] COLLATE "C" NOT NULL,
        scenario_slug ${TEXT},
        country ${TEXT},
        recomm_id ${TEXT},
        ts bigint NOT NULL,
        received_at bigint NOT NULL,
        seq bigint NOT NULL,
        item_keys integer[] NOT NULL
      )`,
      // An event id is the tenant's once per table: a client may send a batch again, to this daemon or to
      // another, and `ON CONFLICT DO NOTHING` keeps the first (docs/guide.md, "Ingestion").
      `CREATE UNIQUE INDEX interactions_event_id ON interactions (tenant_id, event_id) WHERE event_id IS NOT NULL`,
      `CREATE UNIQUE INDEX impressions_event_id ON impressions (tenant_id, event_id) WHERE event_id IS NOT NULL`,
      // A tenant's events in commit order: the state loads and the lake exports them by ranges of seq.
      'CREATE INDEX interactions_seq ON interactions (tenant_id, seq)',
      'CREATE INDEX impressions_seq ON impressions (tenant_id, seq)',
      `CREATE TABLE config_documents (
        tenant_id ${TEXT} NOT NULL,
        kind ${TEXT} NOT NULL,
        key ${TEXT} NOT NULL,
        doc json NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, kind, key)
      )`,
      `CREATE TABLE merge_ledger (
        tenant_id ${TEXT} NOT NULL,
        user_id ${TEXT} NOT NULL,
        session_id ${TEXT} NOT NULL,
        events_copied integer NOT NULL,
        merged_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, user_id, session_id)
      )`,
      // The record of answers as daily rollups (docs/guide.md, "Analytics and experiments"); '' stands for
      // no scenario or experiment in answer_days' key. Items and users are keyed so that two daemons that
      // each record a row of the same day keep it once.
      `CREATE TABLE answer_days (
        tenant_id ${TEXT} NOT NULL,
        day integer NOT NULL,
        scenario ${TEXT} NOT NULL,
        algorithm ${TEXT} NOT NULL,
        experiment ${TEXT} NOT NULL,
        answers bigint NOT NULL,
        PRIMARY KEY (tenant_id, day, scenario, algorithm, experiment)
      )`,
      `CREATE TABLE answer_items (
        tenant_id ${TEXT} NOT NULL,
        day integer NOT NULL,
        item_id ${TEXT} NOT NULL,
        PRIMARY KEY (tenant_id, day, item_id)
      )`,
      `CREATE TABLE experiment_users (
        tenant_id ${TEXT} NOT NULL,
        day integer NOT NULL,
        experiment ${TEXT} NOT NULL,
        scenario ${TEXT} NOT NULL,
        user_id ${TEXT} NOT NULL,
        PRIMARY KEY (tenant_id, day, experiment, scenario, user_id)
      )`,
      // Each tenant's item ids under integer keys (src/store/item-keys.ts): one key per item, one item per key.
      `CREATE TABLE item_keys (
        tenant_id ${TEXT} NOT NULL,
        item_id ${TEXT} NOT NULL,
        item_key integer NOT NULL,
        PRIMARY KEY (tenant_id, item_id),
        UNIQUE (tenant_id, item_key)
      )`,
    ],
  },
  {
    version: 2,
    description: "each tenant's log of changes, for daemons that follow each other's writes",
    // A plain sequence would not do: a transaction that commits later can hold a smaller number, and a
    // follower reading past the last number it saw would skip it. The tenant's counter row, updated in the
    // write's transaction, makes a second writer of the tenant wait for the first to commit: the log's
    // numbers follow commit order, without gaps (a rolled-back write takes its numbers with it).
    statements: [
      `CREATE TABLE change_counters (
        tenant_id ${TEXT} PRIMARY KEY,
        seq bigint NOT NULL
      )`,
      `CREATE TABLE change_log (
        tenant_id ${TEXT} NOT NULL,
        seq bigint NOT NULL,
        kind ${TEXT} NOT NULL,
        payload jsonb NOT NULL,
        PRIMARY KEY (tenant_id, seq)
      )`,
    ],
  },
  {
    version: 3,
    description: "each tenant's counters of event sequence numbers and item keys, shared by every daemon",
    // On DuckDB one process gives the numbers from memory (src/store/write-queue.ts, item-keys.ts); daemons
    // sharing a database give them from this row instead, in the flush's transaction (event-numbers.ts).
    // The row stays locked until the flush commits, so a tenant's seq numbers follow commit order (the lake
    // exports ranges of them) and two daemons never give one number or one key twice. `interactions` and
    // `impressions`: the last seq given in each table; `item_keys`: how many keys were given (the next one).
    // A database written before this version starts each tenant's counters after what it holds.
    statements: [
      `CREATE TABLE event_counters (
        tenant_id ${TEXT} PRIMARY KEY,
        interactions bigint NOT NULL,
        impressions bigint NOT NULL,
        item_keys integer NOT NULL
      )`,
      `INSERT INTO event_counters
       SELECT tenant_id, coalesce(max(interactions), 0), coalesce(max(impressions), 0), coalesce(max(item_keys), 0)
         FROM (SELECT tenant_id, max(seq) AS interactions, NULL::bigint AS impressions, NULL::integer AS item_keys
                 FROM interactions GROUP BY tenant_id
               UNION ALL
               SELECT tenant_id, NULL, max(seq), NULL FROM impressions GROUP BY tenant_id
               UNION ALL
               SELECT tenant_id, NULL, NULL, max(item_key) + 1 FROM item_keys GROUP BY tenant_id) AS held
        GROUP BY tenant_id`,
    ],
  },
  {
    version: 4,
    description: "the version of each tenant's model to serve, which every daemon swaps in",
    // Daemons sharing a database and a data dir read which version to serve here rather than from the
    // artifacts' CURRENT pointers alone (docs/batch-models.md, "Cluster mode"). `version` names the
    // version's folder (epoch milliseconds); `published_at` is when it was recorded.
    statements: [
      `CREATE TABLE model_versions (
        tenant_id ${TEXT} NOT NULL,
        model ${TEXT} NOT NULL,
        version bigint NOT NULL,
        published_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, model)
      )`,
    ],
  },
];

export const POSTGRES_SCHEMA_VERSION = POSTGRES_MIGRATIONS[POSTGRES_MIGRATIONS.length - 1].version;

/** The database has a schema version this binary does not know. */
export class PostgresSchemaTooNewError extends SchemaTooNewError {
  constructor(databaseVersion: number, binaryVersion: number) {
    super(databaseVersion, binaryVersion);
    this.message =
      `the PostgreSQL database has schema version ${databaseVersion}, but this nextrec knows versions up ` +
      `to ${binaryVersion}; upgrade nextrec to use it`;
  }
}

/**
 * The advisory lock key daemons starting together take while they migrate, so that one applies each
 * version and the others find it applied (two concurrent CREATE TABLE IF NOT EXISTS can both fail).
 */
const MIGRATION_LOCK = 0x6e657874_0001n; // 'next', 1

/** Brings the database to POSTGRES_SCHEMA_VERSION, each migration in its own transaction. */
export async function migratePostgres(
  client: pg.ClientBase,
  migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS,
): Promise<{ from: number; to: number }> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
  try {
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, description text, applied_at bigint)',
    );
    const applied = await client.query<{ version: number }>(
      'SELECT coalesce(max(version), 0) AS version FROM schema_migrations',
    );
    const from = applied.rows[0].version;
    const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
    if (from > latest) throw new PostgresSchemaTooNewError(from, latest);
    for (const migration of migrations) {
      if (migration.version <= from) continue;
      await client.query('BEGIN');
      try {
        for (const statement of migration.statements) await client.query(statement);
        await client.query('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [
          migration.version,
          migration.description,
          Date.now(),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    return { from, to: Math.max(from, latest) };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => undefined);
  }
}
