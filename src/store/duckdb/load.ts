import type { DuckDBConnection } from '@duckdb/node-api';
import type { LoadReads, TenantChunk } from '../api/load.js';
import { ITEM_COLUMNS, USER_COLUMNS, catalogItemFromRow, userFromRow } from '../row-mapping.js';
import type { StoredInteraction } from '../rows.js';
import { historyEventFromRow } from '../row-mapping.js';
import type { ReadRunner } from './reads.js';
import { streamedRead } from './streamed-read.js';

/** Interactions sorted by one history query at most (about 16 MB of DuckDB's memory for the sort). */
const ROWS_PER_HISTORY_QUERY = 100_000;
const DAY_MS = 86_400_000;
/** Only events still inside a window are read ($1: since, $2: purchases since). */
const IN_WINDOW = `(ts >= $1 OR (type = 'purchase' AND ts >= $2))`;

/** `rowsPerHistoryQuery`: at most this many interactions are sorted by one query (see `histories`). */
export function duckDbLoadReads(read: ReadRunner, rowsPerHistoryQuery = ROWS_PER_HISTORY_QUERY): LoadReads {
  return {
    merges: () =>
      read(async (db) =>
        (await rows(db, 'SELECT tenant_id, user_id, session_id FROM merge_ledger')).map(
          ([tenantId, userId, sessionId]) => ({
            tenantId: String(tenantId),
            userId: String(userId),
            sessionId: String(sessionId),
          }),
        ),
      ),
    documents: (kind) =>
      read(async (db) =>
        (await rows(db, 'SELECT tenant_id, doc FROM config_documents WHERE kind = $1', [kind])).map(
          ([tenantId, doc]) => ({ tenantId: String(tenantId), document: JSON.parse(String(doc)) as unknown }),
        ),
      ),
    items: () =>
      streamedRead(read, (db) =>
        tenantChunks(
          db,
          `SELECT tenant_id, ${ITEM_COLUMNS} FROM items ORDER BY tenant_id, created_at, external_id`,
          [],
          (row) => catalogItemFromRow(row, 1),
        ),
      ),
    users: () =>
      streamedRead(read, (db) =>
        tenantChunks(db, `SELECT tenant_id, ${USER_COLUMNS} FROM users`, [], (row) => userFromRow(row, 1)),
      ),
    interactionTotals: () =>
      read(async (db) =>
        (await rows(db, 'SELECT tenant_id, count(*) FROM interactions GROUP BY ALL')).map(
          ([tenantId, total]) => ({ tenantId: String(tenantId), total: Number(total) }),
        ),
      ),
    interactionEventIds: () =>
      streamedRead(read, (db) =>
        tenantChunks(
          db,
          'SELECT tenant_id, event_id FROM interactions WHERE event_id IS NOT NULL',
          [],
          (row) => String(row[1]),
        ),
      ),
    impressionEventIds: () =>
      streamedRead(read, (db) =>
        tenantChunks(
          db,
          'SELECT tenant_id, event_id FROM impressions WHERE event_id IS NOT NULL',
          [],
          (row) => String(row[1]),
        ),
      ),
    windowedInteractions: (since, purchasesSince) =>
      streamedRead(read, (db) => histories(db, [since, purchasesSince], rowsPerHistoryQuery)),
  };
}

/**
 * The interactions inside the windows in time order, a run of days at a time: one sort of every event
 * would leave the process holding what DuckDB allocated for it (hundreds of MB at millions of events)
 * long after the sort freed it (docs/memory.md).
 */
async function* histories(
  db: DuckDBConnection,
  window: number[],
  rowsPerQuery: number,
): AsyncGenerator<TenantChunk<StoredInteraction>> {
  const days = await rows(
    db,
    `SELECT ts // ${DAY_MS} AS day, count(*) FROM interactions WHERE ${IN_WINDOW} GROUP BY day ORDER BY day`,
    window,
  );
  for (let first = 0; first < days.length;) {
    let last = first;
    let count = Number(days[first][1]);
    while (last + 1 < days.length && count + Number(days[last + 1][1]) <= rowsPerQuery)
      count += Number(days[++last][1]);
    const from = Number(days[first][0]) * DAY_MS;
    const to = (Number(days[last][0]) + 1) * DAY_MS;
    yield* tenantChunks(
      db,
      `SELECT tenant_id, user_id, session_id, item_id, type, weight, country, ts, merged FROM interactions
        WHERE ${IN_WINDOW} AND ts >= $3 AND ts < $4
        ORDER BY ts`,
      [...window, from, to],
      historyEventFromRow,
    );
    first = last + 1;
  }
}

/** The rows of a query whose first column is the tenant id, a chunk at a time. */
async function* tenantChunks<T>(
  db: DuckDBConnection,
  sql: string,
  params: (string | number)[],
  rowOf: (row: unknown[]) => T,
): AsyncGenerator<TenantChunk<T>> {
  const result = await db.stream(sql, params.length > 0 ? params : undefined);
  for await (const chunk of result.yieldRowsJs()) {
    const tenantIds = new Array<string>(chunk.length);
    const converted = new Array<T>(chunk.length);
    for (let i = 0; i < chunk.length; i++) {
      tenantIds[i] = String(chunk[i][0]);
      converted[i] = rowOf(chunk[i]);
    }
    yield { tenantIds, rows: converted };
  }
}

async function rows(
  db: DuckDBConnection,
  sql: string,
  params: (string | number)[] = [],
): Promise<unknown[][]> {
  return (await db.runAndReadAll(sql, params)).getRowsJS();
}
