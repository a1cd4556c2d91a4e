import type pg from 'pg';
import {
  AppliedThenFailedError,
  type AppliedSync,
  type FeedStaging,
  type FeedStore,
  type StagedRecord,
} from '../api/feeds.js';
import { catalogItemFromRow, type CatalogItem } from '../row-mapping.js';
import { logChanges } from './change-log.js';
import { inTransaction, runStatements } from './transaction.js';

/** What the feed store needs of the daemon's write queue. */
export interface FeedWrites {
  /** Runs `task` alone: no write of this daemon commits while it runs. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
}

/** `origin`: the store's id in the change log (change-log.ts). */
export function pgFeedStore(pool: pg.Pool, writes: FeedWrites, origin = ''): FeedStore {
  return { stage: () => PgFeedStaging.create(pool, writes, origin) };
}

let tables = 0;

/** Changed items handed to memory at a time, as DuckDB's chunks of rows (src/store/duckdb/feeds.ts). */
const CHANGED_CHUNK = 2048;

/**
 * An item's attributes with a record's `patch` applied, as JSON text: the attributes the rules set
 * replaced, a null one removed, the others kept (src/store/api/feeds.ts). The text is the one DuckDB's
 * json_merge_patch writes for the same values: the attributes not set first, in their order, then those
 * set, in the record's order, without spaces. The rules set scalars and lists only (src/feeds/mapping.ts),
 * so the patch is applied at the top level; each value keeps its text as written (DuckDB writes a few
 * numbers anew, 1e+21 as 1e21: the same value).
 */
const merged = (attributes: string, patch: string) => `(
  SELECT '{' || coalesce(string_agg(to_json(m.key)::text || ':' || m.value::text, ',' ORDER BY m.part, m.n), '')
         || '}'
    FROM (SELECT 0 AS part, o.key, o.value, o.n
            FROM json_each(CASE WHEN json_typeof(${attributes}) = 'object' THEN ${attributes} ELSE '{}' END)
                 WITH ORDINALITY AS o(key, value, n)
           WHERE NOT EXISTS (SELECT 1 FROM json_each(${patch}) AS p WHERE p.key = o.key)
          UNION ALL
          SELECT 1, p.key, p.value, p.n FROM json_each(${patch}) WITH ORDINALITY AS p(key, value, n)
           WHERE json_typeof(p.value) <> 'null') AS m)`;

/** The columns catalogItemFromRow reads, the attributes as the text stored. */
const CATALOG_COLUMNS =
  'external_id, category, attributes::text, expires_at, available, feed_managed, created_at, updated_at';

/**
 * A sync's records in a TEMP table of a connection of the pool that the staging holds until it is
 * dropped: only that connection sees the table, and PostgreSQL drops it with the connection, so a daemon
 * that dies mid-sync leaves nothing behind (src/store/api/feeds.ts). Staging takes nothing of the write
 * queue: the records are the sync's own until its apply, which runs as an exclusive task of the queue,
 * so that no write of this daemon interleaves with it or with the changed items coming into memory.
 */
class PgFeedStaging implements FeedStaging {
  private sequence = 0;
  /** Set when the held connection broke: its TEMP table is gone with it. */
  private lost = false;
  /**
   * A held connection that breaks between two statements reports it as an event: unheard, it would end
   * the process (the pool listens only to the connections it holds idle).
   */
  private readonly onError = () => (this.lost = true);

  private constructor(
    private client: pg.PoolClient | undefined,
    private readonly writes: FeedWrites,
    private readonly table: string,
    private readonly origin: string,
  ) {
    client?.on('error', this.onError);
  }

  static async create(pool: pg.Pool, writes: FeedWrites, origin: string): Promise<PgFeedStaging> {
    const table = `feed_stage_${++tables}`;
    const client = await pool.connect();
    try {
      await client.query(
        `CREATE TEMP TABLE ${table} (
          seq bigint NOT NULL,
          external_id text COLLATE "C" NOT NULL,
          mapped boolean NOT NULL,
          has_category boolean NOT NULL,
          category text COLLATE "C",
          patch json
        )`,
      );
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    return new PgFeedStaging(client, writes, table, origin);
  }

  /** One statement per page: a column of each field, taken apart with `unnest`. */
  async append(records: readonly StagedRecord[]): Promise<void> {
    if (records.length === 0) return;
    const client = this.held();
    const first = this.sequence;
    this.sequence += records.length;
    const columns: unknown[][] = [[], [], [], [], [], []];
    records.forEach((record, i) => {
      const row = record.mapped
        ? [
            first + i,
            record.item.externalId,
            true,
            record.item.category !== undefined,
            record.item.category ?? null,
            JSON.stringify(record.item.attributes),
          ]
        : [first + i, record.externalId, false, false, null, null];
      row.forEach((value, column) => columns[column].push(value));
    });
    await client.query(
      `INSERT INTO ${this.table}
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::boolean[], $4::boolean[], $5::text[], $6::json[])`,
      columns,
    );
  }

  async apply(
    tenantId: string,
    changed: (items: CatalogItem[]) => void,
    dropped: () => void,
  ): Promise<AppliedSync> {
    const client = this.held();
    // Before the exclusive task: it reads only the staging, so the queue's writes need not wait for it.
    const last = await this.lastRecords(client).catch((error: unknown) => this.failed(error));
    return this.writes.exclusive(async () => {
      const now = Date.now();
      const result = await inTransaction(client, () => this.applyLast(client, last, tenantId, now)).catch(
        (error: unknown) => this.failed(error),
      );
      try {
        // The staged records go before the changed items come into memory: the peak holds one of them.
        // Should they not go, `drop` (after the sync, whatever its outcome) tries again.
        await this.dropTables(client).catch(() => undefined);
        dropped();
        await this.readChanged(client, tenantId, now, changed);
      } catch (error) {
        throw new AppliedThenFailedError(result, error);
      }
      return result;
    });
  }

  /**
   * The statements of the apply, in its transaction. As DuckDB's one INSERT OR REPLACE, but as an UPDATE
   * of the items the tenant holds and an INSERT of the others: an UPDATE computes each row from its
   * latest version (under READ COMMITTED, PostgreSQL evaluates it again on a row another daemon changed
   * meanwhile), so a write of another daemon committed during the apply is merged, never lost. An item
   * another daemon inserted since the INSERT's snapshot keeps what that daemon wrote, as if it were
   * written after the sync.
   */
  private async applyLast(
    client: pg.PoolClient,
    last: string,
    tenantId: string,
    now: number,
  ): Promise<AppliedSync> {
    const counted = await client.query<[string]>({
      text: `SELECT count(*) FILTER (WHERE mapped) FROM ${last}`,
      rowMode: 'array',
    });
    const upserted = Number(counted.rows[0][0]);
    const category = 'CASE WHEN s.has_category THEN s.category ELSE i.category END';
    const attributes = merged('i.attributes', 's.patch');
    await client.query(
      `UPDATE items i SET category = ${category}, attributes = ${attributes}::json, available = true,
              feed_managed = true, updated_at = $2
         FROM ${last} s
        WHERE i.tenant_id = $1 AND i.external_id = s.external_id AND s.mapped
          AND (NOT i.available OR NOT i.feed_managed OR i.category IS DISTINCT FROM ${category}
               OR i.attributes::text IS DISTINCT FROM ${attributes})`,
      [tenantId, now],
    );
    await client.query(
      `INSERT INTO items
       SELECT $1, s.external_id, CASE WHEN s.has_category THEN s.category END, ${merged('NULL::json', 's.patch')}::json,
              NULL, true, true, $2, $2
         FROM ${last} s
        WHERE s.mapped AND NOT EXISTS (SELECT 1 FROM items i WHERE i.tenant_id = $1 AND i.external_id = s.external_id)
       ON CONFLICT (tenant_id, external_id) DO NOTHING`,
      [tenantId, now],
    );
    const marked = await client.query(
      `UPDATE items SET available = false, updated_at = $2
        WHERE tenant_id = $1 AND feed_managed AND available
          AND NOT EXISTS (SELECT 1 FROM ${last} s WHERE s.external_id = items.external_id)`,
      [tenantId, now],
    );
    // Last: the changed items carry the apply's time, by which its followers read them (change-log.ts).
    const change = { kind: 'feed-apply' as const, tenantId, updatedAt: now };
    await runStatements(client, logChanges(this.origin, new Map([[tenantId, [change]]])));
    return { upserted, markedUnavailable: marked.rowCount ?? 0 };
  }

  /**
   * Hands the items the apply changed to `changed`, a chunk at a time in id order, each chunk read after
   * the last id of the one before. Rows the apply wrote carry its time; one written by an earlier write in
   * the same millisecond is read again as committed, which changes nothing.
   */
  private async readChanged(
    client: pg.PoolClient,
    tenantId: string,
    now: number,
    changed: (items: CatalogItem[]) => void,
  ): Promise<void> {
    let after: string | undefined;
    for (;;) {
      const chunk = await client.query<unknown[]>({
        text: `SELECT ${CATALOG_COLUMNS} FROM items
                WHERE tenant_id = $1 AND updated_at = $2 ${after === undefined ? '' : 'AND external_id > $4'}
                ORDER BY external_id LIMIT $3`,
        values: after === undefined ? [tenantId, now, CHANGED_CHUNK] : [tenantId, now, CHANGED_CHUNK, after],
        rowMode: 'array',
      });
      if (chunk.rows.length === 0) return;
      changed(chunk.rows.map((row) => catalogItemFromRow(row)));
      if (chunk.rows.length < CHANGED_CHUNK) return;
      after = String(chunk.rows[chunk.rows.length - 1][0]);
    }
  }

  async drop(): Promise<void> {
    const client = this.client;
    if (client === undefined) return;
    this.client = undefined;
    try {
      if (this.lost) throw lostStaging();
      await this.dropTables(client);
      client.removeListener('error', this.onError);
      client.release();
    } catch (error) {
      // The connection closes instead, and its TEMP tables with it.
      client.removeListener('error', this.onError);
      client.release(error as Error);
    }
  }

  private async dropTables(client: pg.PoolClient): Promise<void> {
    await client.query(`DROP TABLE IF EXISTS ${this.table}, ${this.table}_last`);
  }

  /**
   * The table holding each id's last record: the staging table itself when no id came twice (the usual
   * case, which costs no copy), else a copy without the earlier records. Either is analyzed first: no
   * autovacuum sees a TEMP table, and the apply's joins are planned from its figures.
   */
  private async lastRecords(client: pg.PoolClient): Promise<string> {
    await client.query(`ANALYZE ${this.table}`);
    const counted = await client.query<[string]>({
      text: `SELECT count(*) - count(DISTINCT external_id) FROM ${this.table}`,
      rowMode: 'array',
    });
    if (Number(counted.rows[0][0]) === 0) return this.table;
    const last = `${this.table}_last`;
    await client.query(`DROP TABLE IF EXISTS ${last}`);
    await client.query(
      `CREATE TEMP TABLE ${last} AS
        SELECT DISTINCT ON (external_id) external_id, mapped, has_category, category, patch
          FROM ${this.table} ORDER BY external_id, seq DESC`,
    );
    await client.query(`ANALYZE ${last}`);
    return last;
  }

  /** An error of the held connection, told as the loss of the staging when the connection broke. */
  private failed(error: unknown): never {
    throw this.lost ? lostStaging() : error;
  }

  /** The connection the staging holds; none once dropped. */
  private held(): pg.PoolClient {
    if (this.client === undefined) throw new Error('the feed staging was dropped');
    if (this.lost) throw lostStaging();
    return this.client;
  }
}

/** The connection holding the staged records broke (the server restarted, the network failed). */
function lostStaging(): Error {
  return new Error(
    'the connection to PostgreSQL holding the staged feed was lost; nothing changed, sync again',
  );
}
