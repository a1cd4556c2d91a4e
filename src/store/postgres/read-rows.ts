import type { Pool, PoolClient } from 'pg';
import type { TenantChunk } from '../api/load.js';

/**
 * The item and user columns in the order row-mapping.ts reads them (ITEM_COLUMNS, USER_COLUMNS), the
 * attributes as the text that was written: `pg` would parse a `json` column, and the serving state keeps
 * an item's attributes as that text (migrations.ts).
 */
export const ITEM_COLUMNS =
  'external_id, category, attributes::text, expires_at, available, feed_managed, created_at, updated_at';
export const USER_COLUMNS = 'external_id, attributes::text, created_at, updated_at';

/**
 * The rows of a query, each an array of its columns in order, as DuckDB's readers give them: the mappings
 * of row-mapping.ts read both. A `bigint` comes back as a string (it may exceed a JS number): the mappings
 * turn times and counts into numbers.
 */
export async function selectRows(
  db: Pool | PoolClient,
  text: string,
  values: readonly unknown[] = [],
): Promise<unknown[][]> {
  return (await db.query<unknown[]>({ text, values: [...values], rowMode: 'array' })).rows;
}

/** What a read-only transaction of one snapshot begins with: every read in it sees the same commits. */
const SNAPSHOT = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** The error a connection failed with, to close it rather than give it back to the pool. */
function failure(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** What a snapshot exported by pg_export_snapshot looks like (hex numbers and dashes). */
const SNAPSHOT_ID = /^[0-9A-F-]+$/i;

/**
 * Begins the read-only transaction of one snapshot on `client`: a new one, or the one `snapshot` names
 * (exported by another transaction, still open, with pg_export_snapshot), so that reads on several
 * connections see the same commits.
 */
async function beginSnapshot(client: PoolClient, snapshot: string | undefined): Promise<void> {
  await client.query(SNAPSHOT);
  if (snapshot === undefined) return;
  // SET TRANSACTION SNAPSHOT takes no bound value: the id is checked to be one instead.
  if (!SNAPSHOT_ID.test(snapshot)) throw new Error(`not a snapshot id: ${snapshot}`);
  await client.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
}

/**
 * Runs reads in one read-only transaction on a connection of the pool, so that they see one snapshot: a
 * write committed meanwhile is in all of them or in none. `snapshot`: the exported snapshot to read in.
 */
export async function inSnapshot<T>(
  pool: Pool,
  reads: (client: PoolClient) => Promise<T>,
  snapshot?: string,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await beginSnapshot(client, snapshot);
    const result = await reads(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    broken = failure(error);
    throw error;
  } finally {
    // A connection that failed is closed, not given back to the pool with a transaction open.
    client.release(broken);
  }
}

/** Rows a stream fetches at a time: one round trip per chunk, and no more than a chunk held by the caller. */
export const ROWS_PER_CHUNK = 5_000;

/**
 * The rows of a query, a chunk at a time, through a cursor of the transaction open on `client`: the server
 * keeps the result and the client holds one chunk. Every chunk is of the transaction's snapshot. The
 * cursor is closed once the last chunk was taken or the caller stopped; after an error the transaction
 * is aborted, and ending it is the caller's.
 */
export async function* transactionCursor(
  client: PoolClient,
  text: string,
  values: readonly unknown[],
  rowsPerChunk = ROWS_PER_CHUNK,
): AsyncGenerator<unknown[][], void, undefined> {
  await client.query({ text: `DECLARE stream NO SCROLL CURSOR FOR ${text}`, values: [...values] });
  let failed = false;
  try {
    for (;;) {
      const chunk = await selectRows(client, `FETCH FORWARD ${rowsPerChunk} FROM stream`);
      if (chunk.length > 0) yield chunk;
      if (chunk.length < rowsPerChunk) break;
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    if (!failed) await client.query('CLOSE stream');
  }
}

/**
 * The rows of a query, a chunk at a time, through a cursor: the server keeps the result and the client
 * holds one chunk, since a whole table at once would leave the heap as large as it was long after its rows
 * are garbage (docs/memory.md). The cursor lives in a read-only transaction of its own connection, taken
 * from the pool until the last chunk was taken or the caller stopped; every chunk is of the snapshot the
 * query started with (or of the exported `snapshot` given).
 */
export async function* cursorRows(
  pool: Pool,
  text: string,
  values: readonly unknown[],
  rowsPerChunk = ROWS_PER_CHUNK,
  snapshot?: string,
): AsyncGenerator<unknown[][], void, undefined> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await beginSnapshot(client, snapshot);
    yield* transactionCursor(client, text, values, rowsPerChunk);
  } catch (error) {
    broken = failure(error);
    throw error;
  } finally {
    // Ending the transaction closes the cursor, also when the caller stopped early. A connection that
    // failed is not given back to the pool: it is closed.
    if (broken === undefined) {
      await client.query('ROLLBACK').catch((error: unknown) => {
        broken = failure(error);
      });
    }
    client.release(broken);
  }
}

/** The rows of a query whose first column is the tenant id, a chunk at a time (LoadReads). */
export async function* tenantChunks<T>(
  pool: Pool,
  text: string,
  values: readonly unknown[],
  rowOf: (row: unknown[]) => T,
  rowsPerChunk = ROWS_PER_CHUNK,
  snapshot?: string,
): AsyncGenerator<TenantChunk<T>, void, undefined> {
  for await (const chunk of cursorRows(pool, text, values, rowsPerChunk, snapshot)) {
    const tenantIds = new Array<string>(chunk.length);
    const rows = new Array<T>(chunk.length);
    for (let i = 0; i < chunk.length; i++) {
      tenantIds[i] = String(chunk[i][0]);
      rows[i] = rowOf(chunk[i]);
    }
    yield { tenantIds, rows };
  }
}

/** A function's stream as an async iterable that runs the function anew each time it is iterated. */
export function streamOf<T>(produce: () => AsyncGenerator<T, void, undefined>): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: produce };
}
