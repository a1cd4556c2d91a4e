import type { DuckDBConnection } from '@duckdb/node-api';
import { userDocument } from '../contract/catalog.js';
import { ApiError } from '../contract/errors.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import { REVENUE_TYPES } from '../contract/ingestion.js';
import {
  nullableString,
  REVENUE_COLUMNS,
  revenueFromRow,
  userFromRow,
  USER_COLUMNS,
} from '../store/row-mapping.js';
import { placeholders } from '../store/sql.js';
import { sqlOp } from '../store/api/ops.js';
import { finishErasure } from '../ingestion/erasure.js';

/** A user and the sessions merged into it: every identity whose data is the user's. */
function identitiesOf(tenant: TenantState, userId: string): string[] {
  return [userId, ...(tenant.mergedSessions.get(userId) ?? [])];
}

function iso(ms: unknown): string {
  return new Date(Number(ms)).toISOString();
}

/** SQL matching the rows of these identities in each table, with `$1` the tenant and the ids after it. */
function matching(identities: string[]) {
  const ids = placeholders(identities.length, 2);
  return {
    interactions: `tenant_id = $1 AND (user_id IN (${ids}) OR session_id IN (${ids}))`,
    impressions: `tenant_id = $1 AND user_id IN (${ids})`,
    merge_ledger: `tenant_id = $1 AND (user_id IN (${ids}) OR session_id IN (${ids}))`,
    users: `tenant_id = $1 AND external_id IN (${ids})`,
  };
}

const REVENUE = REVENUE_COLUMNS.join(', ');

/**
 * The user's interactions, each event once (CONTRACT.md, "Integrator features"): a session's event that a
 * merge copied to the user is listed as the copy (the user's, with the session id it came from), not
 * again as the session's; a copy made for another user is that user's. A copy is paired with an original
 * by its source identity, item, type, weight and time, the n-th copy with the n-th such original.
 * `$2` is the user.
 */
function interactionsOnce(where: string): string {
  return `WITH mine AS (
      SELECT event_id, user_id, session_id, item_id, type, weight, scenario_slug, country, ts, received_at, seq,
             ${REVENUE}, coalesce(merged, false) AS copy,
             CASE WHEN coalesce(merged, false) THEN session_id ELSE coalesce(user_id, session_id) END AS source
        FROM interactions WHERE ${where} AND NOT (coalesce(merged, false) AND user_id <> $2)),
    numbered AS (
      SELECT *, row_number() OVER (PARTITION BY copy, source, item_id, type, weight, ts ORDER BY seq) AS nth
        FROM mine)
    SELECT event_id, user_id, session_id, item_id, type, weight, scenario_slug, country, ts, received_at,
           ${REVENUE}
      FROM numbered o
     WHERE copy OR NOT EXISTS (
       SELECT 1 FROM numbered c
        WHERE c.copy AND c.source = o.source AND c.item_id = o.item_id AND c.type = o.type
          AND c.weight = o.weight AND c.ts = o.ts AND c.nth = o.nth)
     ORDER BY seq`;
}

/** A purchase's or a cart's amount, price and profit (docs/guide.md, "Revenue"); nothing for other types. */
function revenueFields(type: string, revenue: unknown[]) {
  if (!REVENUE_TYPES.has(type)) return {};
  return revenueFromRow(revenue);
}

async function rowsOf(db: DuckDBConnection, sql: string, params: string[]): Promise<unknown[][]> {
  return (await db.runAndReadAll(sql, params)).getRowsJS();
}

/**
 * `GET /users/:userId/export`: the user row, its interactions and impressions (those of the sessions
 * merged into it included) and its merge ledger rows; 404 when the tenant holds nothing of it.
 */
export async function exportUser(runtime: Runtime, tenant: TenantState, userId: string): Promise<object> {
  const identities = identitiesOf(tenant, userId);
  const where = matching(identities);
  const params = [tenant.tenantId, ...identities];
  const data = await runtime.store.read(async (db) => ({
    user: await rowsOf(db, `SELECT ${USER_COLUMNS} FROM users WHERE tenant_id = $1 AND external_id = $2`, [
      tenant.tenantId,
      userId,
    ]),
    interactions: await rowsOf(db, interactionsOnce(where.interactions), params),
    impressions: await rowsOf(
      db,
      `SELECT event_id, user_id, item_ids, scenario_slug, country, recomm_id, ts, received_at
         FROM impressions WHERE ${where.impressions} ORDER BY seq`,
      params,
    ),
    merges: await rowsOf(
      db,
      `SELECT user_id, session_id, events_copied, merged_at FROM merge_ledger
        WHERE ${where.merge_ledger} ORDER BY merged_at, session_id`,
      params,
    ),
  }));
  if (!data.user.length && !data.interactions.length && !data.impressions.length && !data.merges.length) {
    throw new ApiError('NOT_FOUND', `user '${userId}' has no data`);
  }
  return {
    user: data.user.length ? userDocument(userFromRow(data.user[0])) : null,
    interactions: data.interactions.map(
      ([
        eventId,
        user,
        session,
        itemId,
        type,
        weight,
        scenarioSlug,
        country,
        ts,
        receivedAt,
        ...revenue
      ]) => ({
        eventId: nullableString(eventId),
        userId: nullableString(user),
        sessionId: nullableString(session),
        itemId: String(itemId),
        type: String(type),
        weight: Number(weight),
        scenarioSlug: nullableString(scenarioSlug),
        country: nullableString(country),
        timestamp: iso(ts),
        receivedAt: iso(receivedAt),
        ...revenueFields(String(type), revenue),
      }),
    ),
    impressions: data.impressions.map(
      ([eventId, user, itemIds, scenarioSlug, country, recommId, ts, receivedAt]) => ({
        eventId: nullableString(eventId),
        userId: nullableString(user),
        itemIds: (itemIds as unknown[]).map(String),
        scenarioSlug: nullableString(scenarioSlug),
        country: nullableString(country),
        recommId: nullableString(recommId),
        timestamp: iso(ts),
        receivedAt: iso(receivedAt),
      }),
    ),
    merges: data.merges.map(([user, session, eventsCopied, mergedAt]) => ({
      userId: String(user),
      sessionId: String(session),
      eventsCopied: Number(eventsCopied),
      mergedAt: iso(mergedAt),
    })),
  };
}

/**
 * `DELETE /users/:userId`: removes the user row, its events and impressions, its merge ledger rows and
 * the events of the sessions merged into it, from the store (whose file is then rewritten, so that no
 * freed page keeps them), the serving state of both threads, the lake (affected files rewritten), the
 * answer cache and every kept model version (docs/batch-models.md, "Deleted ids"); the tenant's models are
 * rebuilt without it. Answers once all of that is done.
 */
export async function deleteUser(
  runtime: Runtime,
  tenant: TenantState,
  userId: string,
  forgetAnswers: (userIds: string[]) => void,
): Promise<void> {
  const identities = identitiesOf(tenant, userId);
  const where = matching(identities);
  const params = [tenant.tenantId, ...identities];
  const eventIds = await runtime.store.read(async (db) =>
    (
      await rowsOf(
        db,
        `SELECT event_id FROM interactions WHERE ${where.interactions} AND event_id IS NOT NULL`,
        params,
      )
    ).map(([eventId]) => String(eventId)),
  );
  await runtime.store.writes.submit((rows) => {
    for (const [table, rowsOfIdentities] of Object.entries(where)) {
      rows.ops.push(sqlOp({ sql: `DELETE FROM ${table} WHERE ${rowsOfIdentities}`, params }));
    }
    return () => {
      tenant.forgetIdentities(identities, eventIds);
      forgetAnswers(identities);
      runtime.answers.forget(tenant.tenantId, identities);
    };
  });
  await finishErasure(runtime, tenant.tenantId, {
    // The answer record's rows of them (its experiments' users), which only the answer log writes.
    purgeAnswers: () => runtime.answers.purge(tenant.tenantId, identities),
    eraseLake: () => runtime.lake.erase(tenant.tenantId, identities),
    erased: { users: new Set(identities) },
    // A second DELETE finishes it.
    diskFull:
      "the user's rows were deleted from the store, but the data dir's disk is full: the answer record, " +
      'the lake, the model versions or the store file could not be rewritten without them; send the DELETE again once ' +
      'space is freed',
  });
}
