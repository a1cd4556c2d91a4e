import pg from 'pg';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { PgStore, type PgStoreOptions } from '../../src/store/postgres/pg-store.js';
import { writeFlush } from '../../src/store/postgres/flush.js';
import { RowBuffer } from '../../src/store/rows.js';

// The benchmarks start throwaway clusters too (bench/follow.ts): one implementation for both.
import { startPostgres, type TestPostgres } from '../../bench/support/postgres.js';

export { startPostgres, type TestPostgres };

/** Commits one flush of the rows `fill` adds through `writeFlush`, as the PostgreSQL store's write queue does. */
export function flushTo(pool: pg.Pool): (fill: (rows: RowBuffer) => void) => Promise<void> {
  return async (fill) => {
    const rows = new RowBuffer();
    fill(rows);
    const client = await pool.connect();
    try {
      await writeFlush(client, rows);
    } finally {
      client.release();
    }
  };
}

/**
 * A PostgreSQL server for the tests of one file (or describe block): started before them, stopped after
 * them; every store and client they open through it is closed after each test.
 */
export function postgresOfTests(prefix: string): {
  /** A new, empty database of the server: its URL. */
  emptyDatabase(): Promise<string>;
  /** A client connected to `url`, closed after the test. */
  connect(url: string): Promise<pg.Client>;
  /** A store opened on `url`, closed after the test. */
  open(url: string, options?: PgStoreOptions): Promise<PgStore>;
} {
  let server: TestPostgres | undefined;
  let databases = 0;
  let stores: PgStore[] = [];
  let clients: pg.Client[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterEach(async () => {
    for (const store of stores) await store.close().catch(() => undefined);
    for (const client of clients) await client.end().catch(() => undefined);
    stores = [];
    clients = [];
  });
  afterAll(async () => {
    await server?.stop();
  });
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  };
  return {
    connect,
    async emptyDatabase() {
      const name = `${prefix}_${++databases}`;
      await (await connect(server!.url)).query(`CREATE DATABASE ${name}`);
      return server!.url.replace(/[^/]+$/, name);
    },
    async open(url, options) {
      const store = await PgStore.open(url, options);
      stores.push(store);
      return store;
    },
  };
}
