import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import {
  AppliedThenFailedError,
  type AppliedSync,
  type FeedStaging,
  type FeedStore,
  type StagedRecord,
} from '../api/feeds.js';
import { closeAppender } from '../appenders.js';
import { ITEM_COLUMNS, catalogItemFromRow } from '../row-mapping.js';
import type { CatalogItem } from '../row-mapping.js';
import type { WriteQueue } from '../write-queue.js';

let tables = 0;

export function duckDbFeedStore(writes: WriteQueue): FeedStore {
  return { stage: () => DuckDbFeedStaging.create(writes) };
}

/**
 * A sync's records in a TEMP table of the store's write connection. Every statement runs as an exclusive
 * task of the write queue, between two flushes, so no write of another request interleaves with them.
 * TEMP tables live as long as the connection: a daemon that dies mid-sync leaves nothing behind.
 */
class DuckDbFeedStaging implements FeedStaging {
  private sequence = 0;
  /**
   * The staging table's appender, kept from page to page on the connection it was made on: each appender
   * holds about 180 KB of DuckDB's memory until V8 collects it (docs/memory.md), so one per page grew
   * a sync of 500,000 items by 90 MB before its apply. Closed before the apply and when the tables go.
   */
  private kept: { db: DuckDBConnection; appender: DuckDBAppender } | undefined;
  private constructor(
    private readonly writes: WriteQueue,
    private readonly table: string,
  ) {}

  static async create(writes: WriteQueue): Promise<DuckDbFeedStaging> {
    const table = `feed_stage_${++tables}`;
    await writes.exclusive((db) =>
      db.run(
        `CREATE OR REPLACE TEMP TABLE ${table} (
          seq BIGINT NOT NULL,
          external_id VARCHAR NOT NULL,
          mapped BOOLEAN NOT NULL,
          has_category BOOLEAN NOT NULL,
          category VARCHAR,
          patch VARCHAR
        )`,
      ),
    );
    return new DuckDbFeedStaging(writes, table);
  }

  async append(records: readonly StagedRecord[]): Promise<void> {
    if (records.length === 0) return;
    const first = this.sequence;
    this.sequence += records.length;
    await this.writes.exclusive(async (db) => {
      const appender = await this.appender(db);
      try {
        records.forEach((record, i) => {
          appender.appendBigInt(BigInt(first + i));
          if (record.mapped) {
            const { item } = record;
            appender.appendVarchar(item.externalId);
            appender.appendBoolean(true);
            appender.appendBoolean(item.category !== undefined);
            appendNullable(appender, item.category ?? null);
            appender.appendVarchar(JSON.stringify(item.attributes));
          } else {
            appender.appendVarchar(record.externalId);
            appender.appendBoolean(false);
            appender.appendBoolean(false);
            appender.appendNull();
            appender.appendNull();
          }
          appender.endRow();
        });
        appender.flushSync();
      } catch (error) {
        this.release(true);
        throw error;
      }
    });
  }

  apply(
    tenantId: string,
    changed: (items: CatalogItem[]) => void,
    dropped: () => void,
  ): Promise<AppliedSync> {
    return this.writes.exclusive(async (db) => {
      this.release();
      const last = await this.lastRecords(db);
      const now = Date.now();
      let result: AppliedSync;
      await db.run('BEGIN TRANSACTION');
      try {
        const counted = await db.runAndReadAll(`SELECT count(*) FILTER (WHERE mapped) FROM ${last}`);
        const upserted = Number(counted.getRows()[0][0]);
        const merged = `json_merge_patch(coalesce(i.attributes, '{}'::JSON), s.patch::JSON)`;
        const category = 'CASE WHEN s.has_category THEN s.category ELSE i.category END';
        await db.run(
          `INSERT OR REPLACE INTO items
            SELECT $1, s.external_id, ${category}, ${merged}, i.expires_at, true, true,
                   coalesce(i.created_at, $2), $2
              FROM ${last} s LEFT JOIN items i ON i.tenant_id = $1 AND i.external_id = s.external_id
             WHERE s.mapped AND (i.external_id IS NULL OR NOT i.available OR NOT i.feed_managed
                OR i.category IS DISTINCT FROM ${category}
                OR i.attributes::VARCHAR IS DISTINCT FROM ${merged}::VARCHAR)`,
          [tenantId, now],
        );
        const marked = await db.run(
          `UPDATE items SET available = false, updated_at = $2
            WHERE tenant_id = $1 AND feed_managed AND available
              AND NOT EXISTS (SELECT 1 FROM ${last} s WHERE s.external_id = items.external_id)`,
          [tenantId, now],
        );
        result = { upserted, markedUnavailable: marked.rowsChanged };
        await db.run('COMMIT');
      } catch (error) {
        await db.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
      try {
        // The staged records go before the changed items come into memory: the peak holds one of them.
        // Should they not go, `drop` (after the sync, whatever its outcome) tries again.
        await this.dropTables(db).catch(() => undefined);
        dropped();
        // Rows this transaction wrote carry its time; one written by an earlier flush in the same
        // millisecond is read again as committed, which changes nothing.
        const rows = await db.stream(
          `SELECT ${ITEM_COLUMNS} FROM items WHERE tenant_id = $1 AND updated_at = $2`,
          [tenantId, now],
        );
        for await (const chunk of rows.yieldRowsJs()) changed(chunk.map((row) => catalogItemFromRow(row)));
      } catch (error) {
        throw new AppliedThenFailedError(result, error);
      }
      return result;
    });
  }

  async drop(): Promise<void> {
    await this.writes.exclusive((db) => this.dropTables(db)).catch(() => undefined);
  }

  private async dropTables(db: DuckDBConnection): Promise<void> {
    this.release();
    await db.run(`DROP TABLE IF EXISTS ${this.table}`);
    await db.run(`DROP TABLE IF EXISTS ${this.table}_last`);
  }

  /**
   * The table holding each id's last record: the staging table itself when no id came twice (the usual
   * case, which costs no copy), else a copy without the earlier records.
   */
  private async lastRecords(db: DuckDBConnection): Promise<string> {
    let repeated: number;
    try {
      const counted = await db.runAndReadAll(
        `SELECT count(*) - count(DISTINCT external_id) FROM ${this.table}`,
      );
      repeated = Number(counted.getRows()[0][0]);
    } catch (error) {
      throw lostStaging(error);
    }
    if (repeated === 0) return this.table;
    const last = `${this.table}_last`;
    await db.run(
      `CREATE OR REPLACE TEMP TABLE ${last} AS
        SELECT external_id, mapped, has_category, category, patch FROM ${this.table}
        QUALIFY row_number() OVER (PARTITION BY external_id ORDER BY seq DESC) = 1`,
    );
    return last;
  }

  private async appender(db: DuckDBConnection): Promise<DuckDBAppender> {
    if (this.kept?.db === db) return this.kept.appender;
    // None yet, or one of a connection the store replaced since (a scrub reopens it).
    this.release();
    try {
      const appender = await db.createAppender(this.table, 'main', 'temp');
      this.kept = { db, appender };
      return appender;
    } catch (error) {
      throw lostStaging(error);
    }
  }

  /** Closes the kept appender, if any; `discard` drops the rows a failed page left in it. */
  private release(discard = false): void {
    if (this.kept) closeAppender(this.kept.appender, discard);
    this.kept = undefined;
  }
}

/** The store was rewritten (a scrub reopens it) while the sync was staged: its TEMP table is gone. */
function lostStaging(error: unknown): Error {
  const message = (error as Error).message ?? '';
  if (!/does not exist|not (be )?found/i.test(message)) return error as Error;
  return new Error('the store was reopened while the feed was staged; nothing changed, sync again');
}

function appendNullable(appender: DuckDBAppender, value: string | null): void {
  if (value === null) appender.appendNull();
  else appender.appendVarchar(value);
}
