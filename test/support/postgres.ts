import type pg from 'pg';
import { writeFlush } from '../../src/store/postgres/flush.js';
import { RowBuffer } from '../../src/store/rows.js';

// The benchmarks start throwaway clusters too (bench/follow.ts): one implementation for both.
export { startPostgres, type TestPostgres } from '../../bench/support/postgres.js';

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
