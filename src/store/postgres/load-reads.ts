import type { Pool } from 'pg';
import type { LoadReads } from '../api/load.js';
import { catalogItemFromRow, userFromRow } from '../row-mapping.js';
import { historyEventFromRow } from '../row-mapping.js';
import {
  inSnapshot,
  ITEM_COLUMNS,
  ROWS_PER_CHUNK,
  selectRows,
  streamOf,
  tenantChunks,
  USER_COLUMNS,
} from './read-rows.js';

/** Only events still inside a window are read ($1: since, $2: purchases since). */
const IN_WINDOW = `(ts >= $1 OR (type = 'purchase' AND ts >= $2))`;

/**
 * What loading the serving state reads at start, as the DuckDB store reads it (src/store/duckdb/load.ts):
 * the same rows in the same order, the streams a chunk at a time through a cursor (read-rows.ts).
 * `rowsPerChunk`: rows a stream fetches at a time; `snapshot`: an exported snapshot every read is of
 * (ChangeFeed.snapshot), else each read is of its own.
 */
export function pgLoadReads(pool: Pool, rowsPerChunk = ROWS_PER_CHUNK, snapshot?: string): LoadReads {
  const stream = <T>(text: string, values: readonly unknown[], rowOf: (row: unknown[]) => T) =>
    streamOf(() => tenantChunks(pool, text, values, rowOf, rowsPerChunk, snapshot));
  const select = (text: string, values: readonly unknown[] = []) =>
    snapshot === undefined
      ? selectRows(pool, text, values)
      : inSnapshot(pool, (client) => selectRows(client, text, values), snapshot);
  return {
    merges: async () =>
      (await select('SELECT tenant_id, user_id, session_id FROM merge_ledger')).map(
        ([tenantId, userId, sessionId]) => ({
          tenantId: String(tenantId),
          userId: String(userId),
          sessionId: String(sessionId),
        }),
      ),
    documents: async (kind) =>
      (await select('SELECT tenant_id, doc::text FROM config_documents WHERE kind = $1', [kind])).map(
        ([tenantId, doc]) => ({
          tenantId: String(tenantId),
          document: JSON.parse(String(doc)) as unknown,
        }),
      ),
    items: () =>
      stream(
        `SELECT tenant_id, ${ITEM_COLUMNS} FROM items ORDER BY tenant_id, created_at, external_id`,
        [],
        (row) => catalogItemFromRow(row, 1),
      ),
    users: () => stream(`SELECT tenant_id, ${USER_COLUMNS} FROM users`, [], (row) => userFromRow(row, 1)),
    interactionTotals: async () =>
      (await select('SELECT tenant_id, count(*) FROM interactions GROUP BY tenant_id')).map(
        ([tenantId, total]) => ({ tenantId: String(tenantId), total: Number(total) }),
      ),
    interactionEventIds: () =>
      stream('SELECT tenant_id, event_id FROM interactions WHERE event_id IS NOT NULL', [], (row) =>
        String(row[1]),
      ),
    impressionEventIds: () =>
      stream('SELECT tenant_id, event_id FROM impressions WHERE event_id IS NOT NULL', [], (row) =>
        String(row[1]),
      ),
    // In time order, as DuckDB gives them a run of days at a time. DuckDB sorts in runs because its sort
    // of every event would stay in the process's heap (docs/memory.md); PostgreSQL sorts in the server
    // (spilling to disk past work_mem) and the cursor hands over a chunk at a time, so one sort serves,
    // where a query per run would scan the table once per run (no index orders events by time). Events
    // of the same time follow in commit order (seq), where DuckDB leaves their order open.
    windowedInteractions: (since, purchasesSince) =>
      stream(
        `SELECT tenant_id, user_id, session_id, item_id, type, weight, country, ts, merged FROM interactions
          WHERE ${IN_WINDOW}
          ORDER BY ts, seq`,
        // For an integer `ts`, `ts >= x` is `ts >= ceil(x)`: a bigint parameter takes no fraction.
        [Math.ceil(since), Math.ceil(purchasesSince)],
        historyEventFromRow,
      ),
  };
}
