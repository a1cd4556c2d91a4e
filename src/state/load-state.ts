import type { DuckDBConnection } from '@duckdb/node-api';
import type { ServingState, TenantState } from './tenant-state.js';
import { DAY_MS, HISTORY_WINDOW_MS, PURCHASE_WINDOW_MS } from './user-histories.js';
import { ITEM_COLUMNS, USER_COLUMNS, catalogItemFromRow, userFromRow } from '../store/row-mapping.js';
import type { InteractionType } from '../store/rows.js';
import type { VectorConfigField } from '../store/lake-export.js';

/**
 * A kind of `config_documents` row and how its documents go back into a tenant's state at start. The
 * state knows none of the kinds: their owners (config/, tenants/, feeds/) define them, and the runtime
 * (src/runtime.ts) hands them all to `loadState`.
 */
export interface StoredDocumentKind {
  readonly kind: string;
  /** The field of the vectors job's configuration its documents fill, when the job reads them. */
  readonly vectorConfig?: VectorConfigField;
  /** Puts one stored document back in memory; one its schema no longer accepts is left out. */
  restore(tenant: TenantState, stored: unknown): void;
}

/** Rebuilds the serving state from the store (at start), with the documents of the `kinds` given. */
export async function loadState(
  db: DuckDBConnection,
  state: ServingState,
  kinds: readonly StoredDocumentKind[],
  now = Date.now(),
  rowsPerHistoryQuery = ROWS_PER_HISTORY_QUERY,
): Promise<void> {
  for (const [tenantId] of await rows(db, 'SELECT tenant_id FROM tenants ORDER BY tenant_id')) {
    state.add(String(tenantId));
  }
  for (const [tenantId, userId, sessionId] of await rows(
    db,
    'SELECT tenant_id, user_id, session_id FROM merge_ledger',
  )) {
    state.get(String(tenantId))?.recordMerge(String(userId), String(sessionId));
  }
  for (const documents of kinds) {
    for (const [tenantId, doc] of await rows(
      db,
      'SELECT tenant_id, doc FROM config_documents WHERE kind = $1',
      [documents.kind],
    )) {
      const tenant = state.get(String(tenantId));
      if (tenant) documents.restore(tenant, JSON.parse(String(doc)));
    }
  }
  // Streamed, as the larger tables below: a whole result at once would leave the heap as large as it
  // was, long after its rows are garbage (docs/memory.md).
  await eachRow(
    db,
    `SELECT tenant_id, ${ITEM_COLUMNS} FROM items ORDER BY tenant_id, created_at, external_id`,
    (row) => state.get(String(row[0]))?.upsertCatalogItem(catalogItemFromRow(row, 1)),
  );
  await eachRow(db, `SELECT tenant_id, ${USER_COLUMNS} FROM users`, (row) => {
    const user = userFromRow(row, 1);
    state.get(String(row[0]))?.users.set(user.externalId, user);
  });
  for (const [tenantId, total] of await rows(
    db,
    'SELECT tenant_id, count(*) FROM interactions GROUP BY ALL',
  )) {
    const tenant = state.get(String(tenantId));
    if (tenant) tenant.interactionTotal = Number(total);
  }
  await eachRow(
    db,
    'SELECT tenant_id, event_id FROM interactions WHERE event_id IS NOT NULL',
    ([tenantId, eventId]) => state.get(String(tenantId))?.interactionEventIds.add(String(eventId)),
  );
  await eachRow(
    db,
    'SELECT tenant_id, event_id FROM impressions WHERE event_id IS NOT NULL',
    ([tenantId, eventId]) => state.get(String(tenantId))?.impressionEventIds.add(String(eventId)),
  );
  await loadHistories(db, state, now, rowsPerHistoryQuery);
}

/** Interactions sorted by one history query at most (about 16 MB of DuckDB's memory for the sort). */
const ROWS_PER_HISTORY_QUERY = 100_000;
/** Only events still inside a window are read: 30 days of everything, 90 days of purchases. */
const IN_WINDOW = `(ts >= $1 OR (type = 'purchase' AND ts >= $2))`;

/**
 * The histories, in time order, a run of days at a time: one sort of every event would leave the
 * process holding what DuckDB allocated for it (hundreds of MB at millions of events) long after the
 * sort freed it (docs/memory.md).
 */
async function loadHistories(
  db: DuckDBConnection,
  state: ServingState,
  now: number,
  rowsPerQuery: number,
): Promise<void> {
  const window = [now - HISTORY_WINDOW_MS, now - PURCHASE_WINDOW_MS];
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
    await loadHistoryRun(db, state, now, [...window, from, to]);
    first = last + 1;
  }
}

async function loadHistoryRun(
  db: DuckDBConnection,
  state: ServingState,
  now: number,
  params: number[],
): Promise<void> {
  const result = await db.stream(
    `SELECT tenant_id, user_id, session_id, item_id, type, weight, country, ts, merged FROM interactions
      WHERE ${IN_WINDOW} AND ts >= $3 AND ts < $4
      ORDER BY ts`,
    params,
  );
  for await (const chunk of result.yieldRowsJs()) {
    for (const [tenantId, userId, sessionId, itemId, type, weight, country, ts, merged] of chunk) {
      state.get(String(tenantId))?.recordInteraction(
        {
          eventId: null,
          userId: userId === null ? null : String(userId),
          sessionId: sessionId === null ? null : String(sessionId),
          itemId: String(itemId),
          type: type as InteractionType,
          weight: Number(weight),
          scenarioSlug: null,
          country: country === null ? null : String(country),
          ts: Number(ts),
          receivedAt: Number(ts),
          merged: merged === true,
        },
        now,
      );
    }
  }
}

/** Calls `each` with every row of the query, read a chunk at a time. */
async function eachRow(db: DuckDBConnection, sql: string, each: (row: unknown[]) => void): Promise<void> {
  const result = await db.stream(sql);
  for await (const chunk of result.yieldRowsJs()) for (const row of chunk) each(row);
}

async function rows(
  db: DuckDBConnection,
  sql: string,
  params: (string | number)[] = [],
): Promise<unknown[][]> {
  return (await db.runAndReadAll(sql, params)).getRowsJS();
}
