import type { DuckDBConnection } from '@duckdb/node-api';
import type { IdentityOp } from '../api/identity.js';
import type { IdentityReads, MergeRecord, UserData } from '../api/identity-reads.js';
import {
  nullableString,
  REVENUE_COLUMNS,
  revenueFromRow,
  userFromRow,
  USER_COLUMNS,
} from '../row-mapping.js';
import type { InteractionType, StoredImpression, StoredInteraction } from '../rows.js';
import { placeholders } from '../sql.js';
import type { ReadRunner } from './reads.js';
import type { Statement } from './statement.js';

const REVENUE = REVENUE_COLUMNS.join(', ');

/** SQL matching the rows of these identities in each table, with `$1` the tenant and the ids after it. */
function matching(identities: readonly string[]) {
  const ids = placeholders(identities.length, 2);
  return {
    interactions: `tenant_id = $1 AND (user_id IN (${ids}) OR session_id IN (${ids}))`,
    impressions: `tenant_id = $1 AND user_id IN (${ids})`,
    merge_ledger: `tenant_id = $1 AND (user_id IN (${ids}) OR session_id IN (${ids}))`,
    users: `tenant_id = $1 AND external_id IN (${ids})`,
  };
}

export function identityStatements(op: IdentityOp): Statement[] {
  switch (op.op) {
    case 'recordMerge':
      return [
        {
          sql: 'INSERT OR REPLACE INTO merge_ledger VALUES ($1, $2, $3, $4, $5)',
          params: [op.tenantId, op.userId, op.sessionId, op.eventsCopied, op.mergedAt],
        },
      ];
    case 'forgetIdentities': {
      const params = [op.tenantId, ...op.identities];
      return Object.entries(matching(op.identities)).map(([table, rowsOfIdentities]) => ({
        sql: `DELETE FROM ${table} WHERE ${rowsOfIdentities}`,
        params,
      }));
    }
  }
}

/**
 * The interactions of `where`, each event once (IdentityReads.userData): a copy is paired with an
 * original by its source identity, item, type, weight and time, the n-th copy with the n-th such
 * original. `$2` is the user.
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

async function rowsOf(db: DuckDBConnection, sql: string, params: readonly string[]): Promise<unknown[][]> {
  return (await db.runAndReadAll(sql, [...params])).getRowsJS();
}

async function sessionEvents(
  db: DuckDBConnection,
  tenantId: string,
  sessionIds: readonly string[],
): Promise<StoredInteraction[]> {
  const rows = await rowsOf(
    db,
    `SELECT coalesce(user_id, session_id), item_id, type, weight, scenario_slug, country, ts, ${REVENUE}
       FROM interactions
      WHERE tenant_id = $1 AND coalesce(user_id, session_id) IN (${placeholders(sessionIds.length, 2)})
      ORDER BY seq`,
    [tenantId, ...sessionIds],
  );
  return rows.map((row) => {
    const [identity, itemId, type, weight, scenarioSlug, country, ts] = row;
    return {
      eventId: null,
      userId: null,
      sessionId: String(identity),
      itemId: String(itemId),
      type: type as InteractionType,
      weight: Number(weight),
      scenarioSlug: nullableString(scenarioSlug),
      country: nullableString(country),
      ts: Number(ts),
      receivedAt: 0,
      ...revenueFromRow(row, 7), // after the 7 columns above
    };
  });
}

async function userData(
  db: DuckDBConnection,
  tenantId: string,
  userId: string,
  mergedSessions: readonly string[],
): Promise<UserData> {
  const identities = [userId, ...mergedSessions];
  const where = matching(identities);
  const params = [tenantId, ...identities];
  const [userRow] = await rowsOf(
    db,
    `SELECT ${USER_COLUMNS} FROM users WHERE tenant_id = $1 AND external_id = $2`,
    [tenantId, userId],
  );
  const interactions = await rowsOf(db, interactionsOnce(where.interactions), params);
  const impressions = await rowsOf(
    db,
    `SELECT event_id, user_id, item_ids, scenario_slug, country, recomm_id, ts, received_at
       FROM impressions WHERE ${where.impressions} ORDER BY seq`,
    params,
  );
  const merges = await rowsOf(
    db,
    `SELECT user_id, session_id, events_copied, merged_at FROM merge_ledger
      WHERE ${where.merge_ledger} ORDER BY merged_at, session_id`,
    params,
  );
  return {
    user: userRow === undefined ? null : userFromRow(userRow),
    interactions: interactions.map((row): StoredInteraction => {
      const [eventId, user, session, itemId, type, weight, scenarioSlug, country, ts, receivedAt] = row;
      return {
        eventId: nullableString(eventId),
        userId: nullableString(user),
        sessionId: nullableString(session),
        itemId: String(itemId),
        type: String(type) as InteractionType,
        weight: Number(weight),
        scenarioSlug: nullableString(scenarioSlug),
        country: nullableString(country),
        ts: Number(ts),
        receivedAt: Number(receivedAt),
        ...revenueFromRow(row, 10), // after the 10 columns above
      };
    }),
    impressions: impressions.map(
      ([eventId, user, itemIds, scenarioSlug, country, recommId, ts, receivedAt]): StoredImpression => ({
        eventId: nullableString(eventId),
        userId: nullableString(user),
        itemIds: (itemIds as unknown[]).map(String),
        scenarioSlug: nullableString(scenarioSlug),
        country: nullableString(country),
        recommId: nullableString(recommId),
        ts: Number(ts),
        receivedAt: Number(receivedAt),
      }),
    ),
    merges: merges.map(([user, session, eventsCopied, mergedAt]): MergeRecord => ({
      userId: String(user),
      sessionId: String(session),
      eventsCopied: Number(eventsCopied),
      mergedAt: Number(mergedAt),
    })),
  };
}

export function duckDbIdentityReads(read: ReadRunner): IdentityReads {
  return {
    sessionEvents: (tenantId, sessionIds) => read((db) => sessionEvents(db, tenantId, sessionIds)),
    interactionEventIds: (tenantId, identities) =>
      read(async (db) =>
        (
          await rowsOf(
            db,
            `SELECT event_id FROM interactions WHERE ${matching(identities).interactions} AND event_id IS NOT NULL`,
            [tenantId, ...identities],
          )
        ).map(([eventId]) => String(eventId)),
      ),
    userData: (tenantId, userId, mergedSessions) =>
      read((db) => userData(db, tenantId, userId, mergedSessions)),
  };
}
