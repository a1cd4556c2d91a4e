import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  rmSync,
} from 'node:fs';
import { open, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncPath, fsyncPathAsync } from '../durable-files.js';
import { sqlString } from './sql.js';
import { appendItemKey, type FreshKey } from './item-keys.js';
import { closeAppender } from './write-queue.js';
import { LineEncoder, LOG_COLUMNS, type LogBatch } from './log-encoder.js';

/**
 * The interactions log (README, "The HTTP API", ingestion rules): batches of interactions only are made
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
const INSERT_COLUMNS = LOG_COLUMNS.map(([name]) => name).join(', ');
const CSV_COLUMNS = LOG_COLUMNS.map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`).join(', ');

/** A file of the log, named by the sequence number of its first row. */
interface Segment {
  file: string;
  first: number;
  rows: number;
  /** Bytes written and synced. */
  bytes: number;
  /** Tenants whose rows it holds (unknown, empty, for one found at start). */
  tenants: Set<string>;
  /** The item keys its rows were the first to use (unknown for one found at start). */
  freshKeys: FreshKey[] | undefined;
  /** Open while rows are appended to it. */
  handle: Promise<FileHandle> | undefined;
  /** The append in progress, if any (settled when there is none). */
  writing: Promise<void>;
  /**
   * A failed append's bytes may follow `bytes` in the file: the truncation that undoes it failed too. It is
   * tried again before the next append, and before a move, which would otherwise store refused rows.
   */
  tornTail: boolean;
}

const SEGMENT_NAME = /^interactions-(\d{16})\.csv$/;

function segmentName(first: number): string {
  return `interactions-${String(first).padStart(16, '0')}.csv`;
}

export class EventLog {
  /** The segment rows are appended to; none until the first append after a seal. */
  private active: Segment | undefined;
  /** Sealed segments, oldest first, not yet moved. */
  private readonly sealed: Segment[] = [];
  /** Rows appended and not yet moved into the store. */
  private unmovedRows = 0;
  /** Where appends encode their rows; an append's bytes are written before the next append encodes. */
  private readonly encoder = new LineEncoder();

  constructor(
    readonly dir: string,
    /** DuckDB's `threads` setting, which a move sets back after it ran on one. */
    private readonly threads: number,
  ) {
    mkdirSync(dir, { recursive: true });
  }

  /** Rows that are durable here and not yet in the store. */
  get unmoved(): number {
    return this.unmovedRows;
  }

  /** Rows of the segment being appended to. */
  get activeRows(): number {
    return this.active?.rows ?? 0;
  }

  /**
   * Appends rows and syncs them to disk; once it resolves they survive a crash. Appends must not overlap
   * (the write queue makes one at a time). A failed append leaves the segment as it was before it.
   */
  async append(batch: LogBatch): Promise<void> {
    const { rows } = batch;
    if (rows.length === 0) return;
    const bytes = this.encoder.encode(batch);
    const segment = (this.active ??= this.openSegment(batch.firstSeq));
    const writing = this.write(segment, bytes).then(() => {
      segment.rows += rows.length;
      segment.bytes += bytes.length;
      let last: string | undefined;
      for (const [tenantId] of rows) {
        if (tenantId !== last) segment.tenants.add((last = tenantId));
      }
      for (const key of batch.freshKeys) segment.freshKeys!.push(key);
      this.unmovedRows += rows.length;
    });
    // A seal waits for this append, and finds its rows counted.
    segment.writing = writing.catch(() => undefined);
    try {
      await writing;
    } catch (error) {
      // A segment that never took a row is given up, so that the next append opens a fresh one.
      if (segment.rows === 0 && this.active === segment) {
        this.active = undefined;
        void segment.handle?.then((handle) => handle.close()).catch(() => undefined);
        await rm(segment.file, { force: true });
      }
      throw error;
    }
  }

  private async write(segment: Segment, bytes: Buffer): Promise<void> {
    const handle = await segment.handle!;
    if (segment.tornTail) {
      await handle.truncate(segment.bytes);
      await handle.datasync();
      segment.tornTail = false;
    }
    try {
      for (let done = 0; done < bytes.length;) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, segment.bytes + done);
        done += bytesWritten;
      }
      await handle.datasync();
    } catch (error) {
      // Rows whose write was not acknowledged must not be moved later with the segment.
      try {
        await handle.truncate(segment.bytes);
        await handle.datasync();
      } catch {
        segment.tornTail = true;
      }
      throw error;
    }
  }

  private openSegment(first: number): Segment {
    const file = path.join(this.dir, segmentName(first));
    const handle = open(file, 'w').then(async (opened) => {
      try {
        // The segment's name must be durable before its rows are acknowledged.
        await fsyncPathAsync(this.dir);
        return opened;
      } catch (error) {
        await opened.close();
        throw error;
      }
    });
    return {
      file,
      first,
      rows: 0,
      bytes: 0,
      tenants: new Set(),
      freshKeys: [],
      handle,
      writing: Promise.resolve(),
      tornTail: false,
    };
  }

  /** Ends the active segment: later appends start a new one. */
  async seal(): Promise<void> {
    const segment = this.active;
    if (!segment) return;
    this.active = undefined;
    await segment.writing;
    const handle = await segment.handle?.catch(() => undefined);
    await handle?.close();
    segment.handle = undefined;
    if (segment.rows > 0) this.sealed.push(segment);
    else await rm(segment.file, { force: true });
  }

  /**
   * Seals the active segment and moves every sealed one into the store, oldest first, each in one
   * transaction on `connection` (which must have none open). Returns the tenants whose rows moved.
   */
  async moveAll(connection: DuckDBConnection): Promise<Set<string>> {
    await this.seal();
    const tenants = new Set<string>();
    while (this.sealed.length > 0) {
      const segment = this.sealed[0];
      if (segment.tornTail) {
        await truncate(segment.file, segment.bytes);
        await fsyncPathAsync(segment.file);
        segment.tornTail = false;
      }
      await moveSegment(connection, segment, this.threads);
      // Moved: whatever happens next, it is never moved again (a file left behind is removed at start).
      this.sealed.shift();
      this.unmovedRows -= segment.rows;
      for (const tenantId of segment.tenants) tenants.add(tenantId);
      await rm(segment.file, { force: true });
    }
    return tenants;
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
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => SEGMENT_NAME.test(name));
  } catch {
    return;
  }
  if (names.length === 0) return;
  // Segments are moved whole and in order: moving one never reaches the next one's first row.
  const reader = await connection.runAndReadAll('SELECT coalesce(max(seq), 0) FROM interactions');
  const stored = Number(reader.getRows()[0][0]);
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    const first = Number(SEGMENT_NAME.exec(name)![1]);
    if (first > stored && dropTornTail(file) > 0)
      await moveSegment(connection, { file, first, freshKeys: undefined }, threads);
    rmSync(file, { force: true });
  }
  fsyncPath(dir);
}

/** Truncates the file after its last complete line; returns the bytes left. */
function dropTornTail(file: string): number {
  const fd = openSync(file, 'r+');
  try {
    let end = fstatSync(fd).size;
    const chunk = Buffer.alloc(64 * 1024);
    let keep = 0;
    search: while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const read = readSync(fd, chunk, 0, end - start, start);
      for (let i = read - 1; i >= 0; i--) {
        if (chunk[i] === 0x0a) {
          keep = start + i + 1;
          break search;
        }
      }
      end = start;
    }
    if (keep < fstatSync(fd).size) {
      ftruncateSync(fd, keep);
      fsyncSync(fd);
    }
    return keep;
  } finally {
    closeSync(fd);
  }
}

/** What a move reads of a segment: a live one's, or one found at start (its fresh keys unknown). */
type MoveSource = Pick<Segment, 'file' | 'first' | 'freshKeys'>;

/**
 * One transaction: the segment's rows into `interactions`, and the item keys they were first to use; it
 * throws only if the transaction did not commit. The caller removes the file.
 * DuckDB reads the file on one thread: on more, it took more CPU in all (about 3 µs a row against 2) and
 * the event loop's core with it, while ingestion goes on beside the move (bench/ingest). The setting is
 * the instance's, so a query that runs meanwhile on another connection runs on one thread too.
 */
async function moveSegment(
  connection: DuckDBConnection,
  segment: MoveSource,
  threads: number,
): Promise<void> {
  await connection.run('SET threads = 1');
  try {
    await moveRows(connection, segment);
  } finally {
    // Failing to restore it leaves queries on one thread, slower but right; the move stands.
    await connection.run(`SET threads = ${threads}`).catch(() => undefined);
  }
}

async function moveRows(connection: DuckDBConnection, { file, first, freshKeys }: MoveSource): Promise<void> {
  await connection.run('BEGIN TRANSACTION');
  try {
    await connection.run(
      `INSERT INTO interactions (${INSERT_COLUMNS})
       SELECT * FROM read_csv(${sqlString(file)}, header = false, auto_detect = false, delim = ',',
         quote = '"', escape = '"', allow_quoted_nulls = false, columns = {${CSV_COLUMNS}})`,
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
