import { readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startPostgres, type TestPostgres } from './postgres.js';

/**
 * Which store the daemons of this test process run on. vitest's `daemon-postgres` project sets
 * NEXTREC_TEST_STORE=postgres and runs the integration tests of ingestion, catalog, identity,
 * configuration and recommendations again on PostgreSQL (vitest.config.ts); everything else runs on the
 * DuckDB store, the default.
 */
export const TEST_STORE: 'duckdb' | 'postgres' =
  process.env.NEXTREC_TEST_STORE === 'postgres' ? 'postgres' : 'duckdb';

/** One PostgreSQL cluster per test process, started when a daemon first needs it. */
let cluster: Promise<TestPostgres> | undefined;
/** The database of each data dir: a daemon restarted on a data dir finds what it stored. */
const databases = new Map<string, Promise<string>>();

async function createDatabase(name: string): Promise<string> {
  cluster ??= startPostgres();
  const { url } = await cluster;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return url.replace(/[^/]+$/, name);
}

/** The URL of the data dir's database (created on first use). */
function databaseOf(dataDir: string): Promise<string> {
  let url = databases.get(dataDir);
  if (url === undefined) {
    url = createDatabase(`d${databases.size}`);
    databases.set(dataDir, url);
  }
  return url;
}

/** What `nextrec serve` is given besides its data dir to run on this process's store. */
export async function storeArgs(dataDir: string): Promise<string[]> {
  return TEST_STORE === 'postgres' ? ['--store', await databaseOf(dataDir)] : [];
}

async function withClient<T>(dataDir: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: await databaseOf(dataDir) });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Runs `sql` on the data dir's PostgreSQL database; rows as objects. */
export function queryPostgres(dataDir: string, sql: string, params: (string | number)[] = []) {
  return withClient(dataDir, async (client) => (await client.query(sql, params)).rows);
}

/**
 * The files of the data dir's PostgreSQL database (tables and indexes), once a checkpoint wrote
 * everything committed into them and the files of rewritten tables are gone.
 */
export async function postgresFiles(dataDir: string): Promise<string[]> {
  const { directory, oid } = await withClient(dataDir, async (client) => {
    await client.query('CHECKPOINT');
    const setting = await client.query<{ dir: string; oid: number }>(
      "SELECT current_setting('data_directory') AS dir, oid FROM pg_database WHERE datname = current_database()",
    );
    return { directory: setting.rows[0].dir, oid: setting.rows[0].oid };
  });
  const base = path.join(directory, 'base', String(oid));
  return readdirSync(base).map((file) => path.join(base, file));
}
