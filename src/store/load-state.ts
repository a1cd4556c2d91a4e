import { VECTOR_DEFAULTS } from '../contract/vectors.js';
import { VECTOR_DEFAULTS_KEY } from '../state/tenant-config.js';
import { VECTOR_DEFAULTS_KIND } from '../vector/vector-defaults.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { CONFIG_RESOURCES } from '../config/resources.js';
import { FEED_KIND, restoreFeed } from '../feeds/feeds.js';
import { TENANT_SETTINGS_UPDATE, defaultTenantSettings } from '../contract/tenant-settings.js';
import type { ServingState } from '../state/tenant-state.js';
import { DAY_MS, HISTORY_WINDOW_MS, PURCHASE_WINDOW_MS } from '../state/user-histories.js';
import { RATE_LIMITS } from '../contract/tenants.js';
import type { CredentialKind, CredentialRegistry } from '../tenants/credentials.js';
import { RATE_LIMITS_KIND } from '../tenants/rate-limit-service.js';
import { ITEM_COLUMNS, USER_COLUMNS, catalogItemFromRow, userFromRow } from './row-mapping.js';
import type { InteractionType } from './rows.js';

export const TENANT_SETTINGS_KIND = 'tenant-settings';

/** Rebuilds the serving state and the credential registry from the store (at start). */
export async function loadState(
  db: DuckDBConnection,
  state: ServingState,
  credentials: CredentialRegistry,
  now = Date.now(),
  rowsPerHistoryQuery = ROWS_PER_HISTORY_QUERY,
): Promise<void> {
  for (const [tenantId] of await rows(db, 'SELECT tenant_id FROM tenants ORDER BY tenant_id')) {
    state.add(String(tenantId));
  }
  for (const [tenantId, kind, secretHash, salt] of await rows(
    db,
    'SELECT tenant_id, kind, secret_hash, salt FROM credentials',
  )) {
    credentials.set({
      tenantId: String(tenantId),
      kind: kind as CredentialKind,
      secretHash: String(secretHash),
      salt: String(salt),
    });
  }
  const documents = (kind: string) =>
    rows(db, 'SELECT tenant_id, doc FROM config_documents WHERE kind = $1', [kind]);
  for (const [tenantId, doc] of await documents(TENANT_SETTINGS_KIND)) {
    const tenant = state.get(String(tenantId));
    const parsed = TENANT_SETTINGS_UPDATE.safeParse(JSON.parse(String(doc)));
    if (tenant && parsed.success) tenant.replaceSettings({ ...defaultTenantSettings(), ...parsed.data });
  }
  for (const [tenantId, doc] of await documents(VECTOR_DEFAULTS_KIND)) {
    const parsed = VECTOR_DEFAULTS.safeParse(JSON.parse(String(doc)));
    if (parsed.success)
      state.get(String(tenantId))?.putConfigDocument('vectorDefaults', VECTOR_DEFAULTS_KEY, parsed.data);
  }
  for (const [tenantId, doc] of await documents(RATE_LIMITS_KIND)) {
    const tenant = state.get(String(tenantId));
    const parsed = RATE_LIMITS.safeParse(JSON.parse(String(doc)));
    if (tenant && parsed.success) tenant.rateLimits = parsed.data;
  }
  for (const [tenantId, userId, sessionId] of await rows(
    db,
    'SELECT tenant_id, user_id, session_id FROM merge_ledger',
  )) {
    state.get(String(tenantId))?.recordMerge(String(userId), String(sessionId));
  }
  for (const resource of CONFIG_RESOURCES) {
    for (const [tenantId, doc] of await documents(resource.kind)) {
      const tenant = state.get(String(tenantId));
      if (tenant) resource.restore(tenant, JSON.parse(String(doc)));
    }
  }
  for (const [tenantId, doc] of await documents(FEED_KIND)) {
    const tenant = state.get(String(tenantId));
    if (tenant) restoreFeed(tenant, JSON.parse(String(doc)));
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
