import type { DuckDBConnection } from '@duckdb/node-api';
import { keyItemsOfEvents } from './item-keys-migration.js';

export interface Migration {
  version: number;
  description: string;
  /** SQL, or steps that need more than one statement's logic; run in order, in one transaction. */
  statements: (string | ((connection: DuckDBConnection) => Promise<void>))[];
}

/**
 * The schema, as an append-only list. A file records the versions it has; a newer binary applies the
 * missing ones in order, an older binary refuses a file that has versions it does not know.
 * Times are epoch milliseconds (BIGINT): the serving state works in milliseconds and the appender
 * writes them without conversion objects; analytics convert with epoch_ms().
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'tenants, credentials, catalog, events, configuration documents, merge ledger',
    statements: [
      `CREATE TABLE tenants (
        tenant_id VARCHAR PRIMARY KEY,
        created_at BIGINT NOT NULL
      )`,
      `CREATE TABLE credentials (
        tenant_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        secret_hash VARCHAR NOT NULL,
        salt VARCHAR NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, kind)
      )`,
      `CREATE TABLE items (
        tenant_id VARCHAR NOT NULL,
        external_id VARCHAR NOT NULL,
        category VARCHAR,
        attributes JSON,
        expires_at VARCHAR,
        available BOOLEAN NOT NULL,
        feed_managed BOOLEAN NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, external_id)
      )`,
      `CREATE TABLE users (
        tenant_id VARCHAR NOT NULL,
        external_id VARCHAR NOT NULL,
        attributes JSON,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, external_id)
      )`,
      `CREATE TABLE interactions (
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
        received_at BIGINT NOT NULL
      )`,
      `CREATE TABLE impressions (
        tenant_id VARCHAR NOT NULL,
        event_id VARCHAR,
        user_id VARCHAR,
        item_ids VARCHAR[] NOT NULL,
        scenario_slug VARCHAR,
        country VARCHAR,
        recomm_id VARCHAR,
        ts BIGINT NOT NULL,
        received_at BIGINT NOT NULL
      )`,
      `CREATE TABLE config_documents (
        tenant_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        key VARCHAR NOT NULL,
        doc JSON NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, kind, key)
      )`,
      `CREATE TABLE merge_ledger (
        tenant_id VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL,
        events_copied INTEGER NOT NULL,
        merged_at BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, user_id, session_id)
      )`,
    ],
  },
  {
    version: 2,
    description: 'sequence numbers of events, for the lake export',
    // Each table's events are numbered in commit order; the lake exports ranges of them (docs/batch-models.md). Rows of an older file are numbered in their stored order.
    statements: [
      'ALTER TABLE interactions ADD COLUMN seq BIGINT',
      'UPDATE interactions SET seq = rowid + 1',
      'ALTER TABLE impressions ADD COLUMN seq BIGINT',
      'UPDATE impressions SET seq = rowid + 1',
    ],
  },
  {
    version: 3,
    description: 'copies of session events made by identity merges',
    // A copy counts in its user's history but not again in item counters (docs/guide.md, "Identity").
    statements: ['ALTER TABLE interactions ADD COLUMN merged BOOLEAN DEFAULT false'],
  },
  {
    version: 4,
    description: 'a record of the answers recommendations gave',
    // What each answer returned, for catalog coverage and for joining impressions and clicks that carry a
    // recommId to the answer that caused them (docs/guide.md, "Analytics and experiments"). Item ids as a JSON array.
    statements: [
      `CREATE TABLE answers (
        tenant_id VARCHAR NOT NULL,
        recomm_id VARCHAR NOT NULL,
        ts BIGINT NOT NULL,
        user_id VARCHAR,
        scenario VARCHAR,
        algorithm VARCHAR,
        experiment VARCHAR,
        item_ids VARCHAR NOT NULL
      )`,
    ],
  },
  {
    version: 5,
    description: 'the answer an interaction followed',
    // Joins a click or a purchase to the answer record by the recommId it carries (docs/guide.md, "Analytics and experiments").
    statements: ['ALTER TABLE interactions ADD COLUMN recomm_id VARCHAR'],
  },
  {
    version: 6,
    description: 'the answer record as daily rollups',
    // Per UTC day: answers by scenario, algorithm and experiment, the items answers returned, and the
    // users each experiment variant served, so the record grows with days and the catalog, not with
    // traffic (docs/guide.md, "Analytics and experiments"). '' stands for no scenario or experiment in answer_days' key.
    statements: [
      `CREATE TABLE answer_days (
        tenant_id VARCHAR NOT NULL,
        day INTEGER NOT NULL,
        scenario VARCHAR NOT NULL,
        algorithm VARCHAR NOT NULL,
        experiment VARCHAR NOT NULL,
        answers BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, day, scenario, algorithm, experiment)
      )`,
      `CREATE TABLE answer_items (tenant_id VARCHAR NOT NULL, day INTEGER NOT NULL, item_id VARCHAR NOT NULL)`,
      `CREATE TABLE experiment_users (
        tenant_id VARCHAR NOT NULL,
        day INTEGER NOT NULL,
        experiment VARCHAR NOT NULL,
        scenario VARCHAR NOT NULL,
        user_id VARCHAR NOT NULL
      )`,
      `INSERT INTO answer_days
        SELECT tenant_id, (ts // 86400000)::INTEGER, coalesce(scenario, ''), coalesce(algorithm, ''),
               coalesce(experiment, ''), count(*)
          FROM answers GROUP BY ALL`,
      `INSERT INTO answer_items
        SELECT DISTINCT tenant_id, (ts // 86400000)::INTEGER, unnest(from_json(item_ids, '["VARCHAR"]'))
          FROM answers`,
      `INSERT INTO experiment_users
        SELECT DISTINCT tenant_id, (ts // 86400000)::INTEGER, experiment, scenario, user_id
          FROM answers WHERE experiment IS NOT NULL AND scenario IS NOT NULL AND user_id IS NOT NULL`,
      'DROP TABLE answers',
    ],
  },
  {
    version: 7,
    description: 'integer keys of items, and hashes of identities, in events',
    // Analytics group events by item keys rather than ids, and count identities by their hashes (docs/guide.md,
    // "Analytics and experiments"); see item-keys.ts and identity-hash.ts.
    statements: [keyItemsOfEvents],
  },
  {
    version: 8,
    description: 'how far each write log was moved into the store',
    // The last sequence number of the records log a move stored, in its transaction (see record-log.ts).
    statements: ['CREATE TABLE log_marks (log VARCHAR PRIMARY KEY, seq BIGINT NOT NULL)'],
  },
  {
    version: 9,
    description: 'amount, price and profit of purchase and cart events',
    // Summed by analytics and experiment results (docs/guide.md, "Revenue"); NULL on events stored before.
    statements: [
      'ALTER TABLE interactions ADD COLUMN amount DOUBLE',
      'ALTER TABLE interactions ADD COLUMN price DOUBLE',
      'ALTER TABLE interactions ADD COLUMN profit DOUBLE',
    ],
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

export class SchemaTooNewError extends Error {
  constructor(
    readonly fileVersion: number,
    readonly binaryVersion: number,
  ) {
    super(
      `the data file has schema version ${fileVersion}, but this nextrec knows versions up to ${binaryVersion}; ` +
        'upgrade nextrec to open it',
    );
    this.name = 'SchemaTooNewError';
  }
}

async function appliedVersion(connection: DuckDBConnection): Promise<number> {
  await connection.run(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, description VARCHAR, applied_at BIGINT)',
  );
  const reader = await connection.runAndReadAll('SELECT coalesce(max(version), 0) FROM schema_migrations');
  return Number(reader.getRows()[0][0]);
}

/** Brings the file to SCHEMA_VERSION, each migration in its own transaction. */
export async function migrate(
  connection: DuckDBConnection,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<{ from: number; to: number }> {
  const from = await appliedVersion(connection);
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  if (from > latest) throw new SchemaTooNewError(from, latest);
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    await connection.run('BEGIN TRANSACTION');
    try {
      for (const statement of migration.statements) {
        if (typeof statement === 'string') await connection.run(statement);
        else await statement(connection);
      }
      await connection.run('INSERT INTO schema_migrations VALUES ($1, $2, $3)', [
        migration.version,
        migration.description,
        Date.now(),
      ]);
      await connection.run('COMMIT');
    } catch (error) {
      await connection.run('ROLLBACK');
      throw error;
    }
  }
  return { from, to: Math.max(from, latest) };
}
