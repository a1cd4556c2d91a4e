import { rmSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncPath } from '../durable-files.js';
import { sqlString } from './sql.js';
import { appendItemKey, type FreshKey } from './item-keys.js';
import { closeAppender } from './appenders.js';
import { LineEncoder, LOG_COLUMNS, type LogBatch } from './log-encoder.js';
import { REVENUE_COLUMNS } from './row-mapping.js';
import { onOneThread } from './duckdb-settings.js';
import { SegmentLog, segmentsLeft } from './segment-log.js';

/**
 * The interactions log (docs/guide.md, "Ingestion"): batches of interactions only are made
 * durable by appending them to a file and syncing it, and moved into the store's `interactions` table in
 * the background, many batches at a time, by DuckDB's own CSV reader, off the event loop. Appending rows
 * to DuckDB and committing them per batch took about half of the event loop's time (bench/ingest).
 *
 * The store holds a prefix of the events by sequence number: a segment is moved whole, in order, before any
 * other write reaches the store, and before any read of it (see WriteQueue). A segment is removed right
 * after the transaction that moved it commits; one still present at start is moved then, unless the
 * store already holds its first sequence number (it committed, and the removal did not happen).
 */

/** The columns a log row's fields go to, and how DuckDB's CSV reader is to read them. */
interface LogLayout {
  insert: string;
  csv: string;
}

function layoutOf(columns: readonly (readonly [string, string])[]): LogLayout {
  return {
    insert: columns.map(([name]) => name).join(', '),
    csv: columns.map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`).join(', '),
  };
}

const LAYOUT = layoutOf(LOG_COLUMNS);
/**
 * The lines of a nextrec before amount, price and profit (schema version 9): a segment such a binary
 * left at a crash is moved with them, the revenue columns NULL.
 */
const LAYOUT_BEFORE_REVENUE = layoutOf(LOG_COLUMNS.slice(0, LOG_COLUMNS.length - REVENUE_COLUMNS.length));

/** The interactions log's segments: `interactions-<first seq>.csv`. */
const PREFIX = 'interactions';
const EXTENSION = 'csv';

export class EventLog {
  /** Each segment carries the item keys its rows were the first to use. */
  private readonly segments: SegmentLog<FreshKey[]>;
  /** Where appends encode their rows; an append's bytes are written before the next append encodes. */
  private readonly encoder = new LineEncoder();

  constructor(
    readonly dir: string,
    /** DuckDB's `threads` setting, which a move sets back after it ran on one. */
    private readonly threads: number,
  ) {
    this.segments = new SegmentLog(dir, PREFIX, EXTENSION, () => []);
  }

  /** Rows that are durable here and not yet in the store. */
  get unmoved(): number {
    return this.segments.unmoved;
  }

  /** Rows of the segment being appended to. */
  get activeRows(): number {
    return this.segments.activeRows;
  }

  /**
   * Appends rows and syncs them to disk; once it resolves they survive a crash. Appends must not overlap
   * (the write queue makes one at a time). A failed append leaves the segment as it was before it.
   */
  async append(batch: LogBatch): Promise<void> {
    const { rows } = batch;
    if (rows.length === 0) return;
    const bytes = this.encoder.encode(batch);
    await this.segments.append(bytes, batch.firstSeq, rows.length, (segment) => {
      let last: string | undefined;
      for (const [tenantId] of rows) {
        if (tenantId !== last) segment.tenants.add((last = tenantId));
      }
      for (const key of batch.freshKeys) segment.meta.push(key);
    });
  }

  /** Ends the active segment: later appends start a new one. */
  seal(): Promise<void> {
    return this.segments.seal();
  }

  /**
   * Seals the active segment and moves every sealed one into the store, oldest first, each in one
   * transaction on `connection` (which must have none open). Returns the tenants whose rows moved.
   */
  moveAll(connection: DuckDBConnection): Promise<Set<string>> {
    return this.segments.moveAll((segment) =>
      moveSegment(
        connection,
        { file: segment.file, first: segment.first, freshKeys: segment.meta },
        this.threads,
      ),
    );
  }
}

/**
 * Moves the segments a previous run left into the store (at start, before anything reads it): those whose
 * first row the store holds were moved already and are removed; a row cut short by a crash is dropped
 * (its batch was never acknowledged).
 */
export async function recoverEventLog(
  dir: string,
  connection: DuckDBConnection,
  threads: number,
): Promise<void> {
  const left = segmentsLeft(dir, PREFIX, EXTENSION);
  if (left.length === 0) return;
  // Segments are moved whole and in order: moving one never reaches the next one's first row.
  const reader = await connection.runAndReadAll('SELECT coalesce(max(seq), 0) FROM interactions');
  const stored = Number(reader.getRows()[0][0]);
  for (const { file, first, empty } of left) {
    if (first > stored && !empty) {
      const source = { file, first, freshKeys: undefined };
      await moveSegment(connection, source, threads).catch((error: unknown) =>
        // Lines of an older layout have fewer fields, which the current one refuses.
        moveSegment(connection, source, threads, LAYOUT_BEFORE_REVENUE).catch(() => {
          throw error;
        }),
      );
    }
    rmSync(file, { force: true });
  }
  fsyncPath(dir);
}

/** What a move reads of a segment: a live one's, or one found at start (its fresh keys unknown). */
interface MoveSource {
  file: string;
  first: number;
  freshKeys: readonly FreshKey[] | undefined;
}

/**
 * One transaction: the segment's rows into `interactions`, and the item keys they were first to use; it
 * throws only if the transaction did not commit. The caller removes the file.
 * DuckDB reads the file on one thread (`onOneThread`): on more, it took more CPU in all (about 3 µs a row
 * against 2) and the event loop's core with it, while ingestion goes on beside the move (bench/ingest).
 */
function moveSegment(
  connection: DuckDBConnection,
  segment: MoveSource,
  threads: number,
  layout: LogLayout = LAYOUT,
): Promise<void> {
  return onOneThread(connection, threads, () => moveRows(connection, segment, layout));
}

async function moveRows(
  connection: DuckDBConnection,
  { file, first, freshKeys }: MoveSource,
  layout: LogLayout,
): Promise<void> {
  await connection.run('BEGIN TRANSACTION');
  try {
    await connection.run(
      `INSERT INTO interactions (${layout.insert})
       SELECT * FROM read_csv(${sqlString(file)}, header = false, auto_detect = false, delim = ',',
         quote = '"', escape = '"', allow_quoted_nulls = false, columns = {${layout.csv}})`,
    );
    if (freshKeys) await appendItemKeys(connection, freshKeys);
    else {
      // A segment found at start: its new keys are those of its rows that the store does not hold.
      await connection.run(
        `INSERT INTO item_keys
         SELECT DISTINCT tenant_id, item_id, item_key FROM interactions i
         WHERE seq >= ${first} AND NOT EXISTS (
           SELECT 1 FROM item_keys k WHERE k.tenant_id = i.tenant_id AND k.item_id = i.item_id)`,
      );
    }
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Appends keys to `item_keys`, in the connection's transaction: finding them among the moved rows instead
 * (a join of each row against the table) took a tenth of a move's time.
 */
async function appendItemKeys(connection: DuckDBConnection, keys: readonly FreshKey[]): Promise<void> {
  if (keys.length === 0) return;
  const appender = await connection.createAppender('item_keys');
  try {
    for (const key of keys) {
      appendItemKey(appender, key);
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    closeAppender(appender);
  }
}
