import type { Pool } from 'pg';
import type { IdentityReads, MergeRecord, UserData } from '../api/identity-reads.js';
import { nullableString, REVENUE_COLUMNS, revenueFromRow, userFromRow } from '../row-mapping.js';
import type { InteractionType, StoredImpression, StoredInteraction } from '../rows.js';
import { inSnapshot, selectRows, USER_COLUMNS } from './read-rows.js';

const REVENUE = REVENUE_COLUMNS.join(', ');

/** The rows of the identities `$2` (an array) of the tenant `$1` in each table (as identity.ts deletes them). */
const OF_IDENTITIES = {
  interactions: 'tenant_id = $1 AND (user_id = ANY($2) OR session_id = ANY($2))',
  impressions: 'tenant_id = $1 AND user_id = ANY($2)',
  merge_ledger: 'tenant_id = $1 AND (user_id = ANY($2) OR session_id = ANY($2))',
};

/**
 * The interactions of the identities, each event once (IdentityReads.userData), as the DuckDB store
 * reads them (src/store/duckdb/identity.ts): a copy is paired with an original by its source identity,
 * item, type, weight and time, the n-th copy with the n-th such original. `$3` is the user.
 */
const INTERACTIONS_ONCE = `WITH mine AS (
      SELECT event_id, user_id, session_id, item_id, type, weight, scenario_slug, country, ts, received_at, seq,
             ${REVENUE}, coalesce(merged, false) AS copy,
             CASE WHEN coalesce(merged, false) THEN session_id ELSE coalesce(user_id, session_id) END AS source
        FROM interactions WHERE ${OF_IDENTITIES.interactions} AND NOT (coalesce(merged, false) AND user_id <> $3)),
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

async function sessionEvents(
  pool: Pool,
  tenantId: string,
  sessionIds: readonly string[],
): Promise<StoredInteraction[]> {
  const rows = await selectRows(
    pool,
    `SELECT coalesce(user_id, session_id), item_id, type, weight, scenario_slug, country, ts, ${REVENUE}
       FROM interactions
      WHERE tenant_id = $1 AND coalesce(user_id, session_id) = ANY($2)
      ORDER BY seq`,
    [tenantId, sessionIds],
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

function interaction(row: unknown[]): StoredInteraction {
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
}

function impression(row: unknown[]): StoredImpression {
  const [eventId, user, itemIds, scenarioSlug, country, recommId, ts, receivedAt] = row;
  return {
    eventId: nullableString(eventId),
    userId: nullableString(user),
    itemIds: (itemIds as unknown[]).map(String),
    scenarioSlug: nullableString(scenarioSlug),
    country: nullableString(country),
    recommId: nullableString(recommId),
    ts: Number(ts),
    receivedAt: Number(receivedAt),
  };
}

function merge([user, session, eventsCopied, mergedAt]: unknown[]): MergeRecord {
  return {
    userId: String(user),
    sessionId: String(session),
    eventsCopied: Number(eventsCopied),
    mergedAt: Number(mergedAt),
  };
}

/**
 * The data of the user and of the sessions merged into it. Its four reads run in one read-only
 * transaction, so that they are of one snapshot: a write committed meanwhile is in all of them or none.
 */
async function userData(
  pool: Pool,
  tenantId: string,
  userId: string,
  mergedSessions: readonly string[],
): Promise<UserData> {
  const identities = [userId, ...mergedSessions];
  return inSnapshot(pool, async (client) => {
    const [userRow] = await selectRows(
      client,
      `SELECT ${USER_COLUMNS} FROM users WHERE tenant_id = $1 AND external_id = $2`,
      [tenantId, userId],
    );
    const interactions = await selectRows(client, INTERACTIONS_ONCE, [tenantId, identities, userId]);
    const impressions = await selectRows(
      client,
      `SELECT event_id, user_id, item_ids, scenario_slug, country, recomm_id, ts, received_at
         FROM impressions WHERE ${OF_IDENTITIES.impressions} ORDER BY seq`,
      [tenantId, identities],
    );
    const merges = await selectRows(
      client,
      `SELECT user_id, session_id, events_copied, merged_at FROM merge_ledger
        WHERE ${OF_IDENTITIES.merge_ledger} ORDER BY merged_at, session_id`,
      [tenantId, identities],
    );
    return {
      user: userRow === undefined ? null : userFromRow(userRow),
      interactions: interactions.map(interaction),
      impressions: impressions.map(impression),
      merges: merges.map(merge),
    };
  });
}

/** The identity area's reads, as the DuckDB store reads them (src/store/duckdb/identity.ts). */
export function pgIdentityReads(pool: Pool): IdentityReads {
  return {
    sessionEvents: (tenantId, sessionIds) => sessionEvents(pool, tenantId, sessionIds),
    interactionEventIds: async (tenantId, identities) =>
      (
        await selectRows(
          pool,
          `SELECT event_id FROM interactions WHERE ${OF_IDENTITIES.interactions} AND event_id IS NOT NULL`,
          [tenantId, identities],
        )
      ).map(([eventId]) => String(eventId)),
    userData: (tenantId, userId, mergedSessions) => userData(pool, tenantId, userId, mergedSessions),
  };
}
