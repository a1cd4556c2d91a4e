import { rmSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { fsyncPath } from '../durable-files.js';
import type { StoredItem, StoredUser } from './rows.js';
import { onOneThread } from './duckdb-settings.js';
import { SegmentLog, segmentsLeft } from './segment-log.js';
import { sqlString } from './sql.js';

/**
 * The records log (docs/guide.md, "Ingestion"): batches that upsert items or users and
 * nothing else are made durable by appending them to a file (one JSON object a line) and syncing it,
 * and moved into the store's `items` and `users` tables in the background by DuckDB's JSON reader. A
 * commit of one item took DuckDB 6 ms on an idle store and about 20 ms beside live traffic, and every
 * write queued behind it (bench/soak); an append takes one sync.
 *
 * Upserts replace whole rows by key, so a segment's move keeps each key's last row. The store holds a
 * prefix of the records: the log is moved before any other write that may touch items or users reaches
 * the store, and before any read of it (see WriteQueue). A move records the last sequence number it
 * stored in `log_marks`, in its transaction: a segment left at start is moved again only for its rows
 * after that number, so a segment whose removal did not survive a crash never puts an older row back
 * over a newer one.
 */

const PREFIX = 'records';
const EXTENSION = 'jsonl';
/** The `log_marks` row of this log. */
const MARK = 'records';

/** A line's fields and how DuckDB's JSON reader is to read them; `attributes` is JSON text. */
const COLUMNS = [
  ['table', 'VARCHAR'],
  ['seq', 'BIGINT'],
  ['tenant_id', 'VARCHAR'],
  ['external_id', 'VARCHAR'],
  ['category', 'VARCHAR'],
  ['attributes', 'VARCHAR'],
  ['expires_at', 'VARCHAR'],
  ['available', 'BOOLEAN'],
  ['feed_managed', 'BOOLEAN'],
  ['created_at', 'BIGINT'],
  ['updated_at', 'BIGINT'],
] as const;

const JSON_COLUMNS = COLUMNS.map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`).join(', ');

/** The rows of a batch for the records log, each with its tenant. */
export interface RecordBatch {
  items: Iterable<readonly [tenantId: string, item: StoredItem]>;
  users: Iterable<readonly [tenantId: string, user: StoredUser]>;
}

export class RecordLog {
  private readonly segments: SegmentLog<undefined>;
  /** The last sequence number given to a row. */
  private sequence: number;

  constructor(
    readonly dir: string,
    /** The last sequence number the store holds (`log_marks`), after `recoverRecordLog`. */
    stored: number,
    /** DuckDB's `threads` setting, which a move sets back after it ran on one (`onOneThread`). */
    private readonly threads: number,
  ) {
    this.segments = new SegmentLog(dir, PREFIX, EXTENSION, () => undefined);
    this.sequence = stored;
  }

  /** Rows that are durable here and not yet in the store. */
  get unmoved(): number {
    return this.segments.unmoved;
  }

  /**
   * Appends a batch's rows and syncs them to disk; once it resolves they survive a crash. Appends must
   * not overlap (the write queue makes one at a time). A failed append leaves the log as it was before it.
   * A row the store's table would refuse fails here, not at its segment's move.
   */
  async append(batch: RecordBatch): Promise<void> {
    const first = this.sequence + 1;
    const lines: string[] = [];
    const tenants = new Set<string>();
    let seq = first;
    for (const [tenantId, item] of batch.items) {
      lines.push(itemLine(tenantId, item, seq++));
      tenants.add(tenantId);
    }
    for (const [tenantId, user] of batch.users) {
      lines.push(userLine(tenantId, user, seq++));
      tenants.add(tenantId);
    }
    if (lines.length === 0) return;
    lines.push('');
    await this.segments.append(Buffer.from(lines.join('\n')), first, lines.length - 1, (segment) => {
      for (const tenantId of tenants) segment.tenants.add(tenantId);
    });
    // Numbers of a failed append are given again: its rows are not in the file.
    this.sequence = seq - 1;
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
      onOneThread(connection, this.threads, () => moveSegment(connection, segment.file)),
    );
  }
}

/**
 * Moves the segments a previous run left into the store (at start, before anything reads it), each for
 * its rows after the store's mark; returns the last sequence number the store then holds.
 */
export async function recoverRecordLog(dir: string, connection: DuckDBConnection): Promise<number> {
  const left = segmentsLeft(dir, PREFIX, EXTENSION);
  for (const { file, empty } of left) {
    if (!empty) await moveSegment(connection, file);
    rmSync(file, { force: true });
  }
  if (left.length > 0) fsyncPath(dir);
  const reader = await connection.runAndReadAll(
    `SELECT coalesce(max(seq), 0) FROM log_marks WHERE log = ${sqlString(MARK)}`,
  );
  return Number(reader.getRows()[0][0]);
}

/**
 * One transaction: each key's last row of the segment after the store's mark, into `items` or `users`,
 * and the mark moved to the segment's last row. It throws only if the transaction did not commit.
 */
async function moveSegment(connection: DuckDBConnection, file: string): Promise<void> {
  const rows = `(SELECT * FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = {${JSON_COLUMNS}})
    WHERE seq > (SELECT coalesce(max(seq), 0) FROM log_marks WHERE log = ${sqlString(MARK)}))`;
  const last = (table: string) =>
    `"table" = ${sqlString(table)} QUALIFY row_number() OVER (PARTITION BY tenant_id, external_id ORDER BY seq DESC) = 1`;
  await connection.run('BEGIN TRANSACTION');
  try {
    await connection.run(
      `INSERT OR REPLACE INTO items
       SELECT tenant_id, external_id, category, attributes::JSON, expires_at, available, feed_managed,
              created_at, updated_at
       FROM ${rows} WHERE ${last('items')}`,
    );
    await connection.run(
      `INSERT OR REPLACE INTO users
       SELECT tenant_id, external_id, attributes::JSON, created_at, updated_at
       FROM ${rows} WHERE ${last('users')}`,
    );
    await connection.run(
      `INSERT OR REPLACE INTO log_marks SELECT ${sqlString(MARK)}, max(seq) FROM ${rows} HAVING count(*) > 0`,
    );
    await connection.run('COMMIT');
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

function itemLine(tenantId: string, item: StoredItem, seq: number): string {
  checkKey(tenantId, item.externalId);
  if (typeof item.available !== 'boolean' || typeof item.feedManaged !== 'boolean')
    throw new TypeError('items.available and items.feed_managed must be booleans');
  checkTimes(item);
  return JSON.stringify({
    table: 'items',
    seq,
    tenant_id: tenantId,
    external_id: item.externalId,
    category: item.category,
    attributes: JSON.stringify(item.attributes),
    expires_at: item.expiresAt,
    available: item.available,
    feed_managed: item.feedManaged,
    created_at: item.createdAt,
    updated_at: item.updatedAt,
  });
}

function userLine(tenantId: string, user: StoredUser, seq: number): string {
  checkKey(tenantId, user.externalId);
  checkTimes(user);
  return JSON.stringify({
    table: 'users',
    seq,
    tenant_id: tenantId,
    external_id: user.externalId,
    attributes: JSON.stringify(user.attributes),
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  });
}

function checkKey(tenantId: unknown, externalId: unknown): void {
  if (typeof tenantId !== 'string' || typeof externalId !== 'string')
    throw new TypeError('a record needs a tenant id and an external id (strings)');
}

function checkTimes({ createdAt, updatedAt }: { createdAt: number; updatedAt: number }): void {
  if (!Number.isSafeInteger(createdAt) || !Number.isSafeInteger(updatedAt))
    throw new TypeError('a record needs created_at and updated_at (integers)');
}
