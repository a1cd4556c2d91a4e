import type { Pool } from 'pg';
import type { ChangeReads } from '../api/changes.js';
import { catalogItemFromRow, historyEventFromRow, nullableString, userFromRow } from '../row-mapping.js';
import { ITEM_COLUMNS, selectRows, USER_COLUMNS } from './read-rows.js';
import { tenantCredentials } from './tenant-reads.js';

/** Items a feed apply's follower reads at a time. */
const CHUNK = 2048;

/**
 * What a follower reads of a change (src/store/api/changes.ts), as committed now. Items come in the
 * order loading reads them (created_at, then id), so that a follower numbers new items as a load would.
 */
export function pgChangeReads(pool: Pool): ChangeReads {
  return {
    items: async (tenantId, itemIds) =>
      (
        await selectRows(
          pool,
          `SELECT ${ITEM_COLUMNS} FROM items WHERE tenant_id = $1 AND external_id = ANY($2)
            ORDER BY created_at, external_id`,
          [tenantId, itemIds],
        )
      ).map((row) => catalogItemFromRow(row)),
    users: async (tenantId, userIds) =>
      (
        await selectRows(
          pool,
          `SELECT ${USER_COLUMNS} FROM users WHERE tenant_id = $1 AND external_id = ANY($2)`,
          [tenantId, userIds],
        )
      ).map((row) => userFromRow(row)),
    // The columns historyEventFromRow reads after the first, which is the event id here.
    interactions: async (tenantId, first, last) =>
      (
        await selectRows(
          pool,
          `SELECT event_id, user_id, session_id, item_id, type, weight, country, ts, merged FROM interactions
            WHERE tenant_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`,
          [tenantId, first, last],
        )
      ).map((row) => ({ ...historyEventFromRow(row), eventId: nullableString(row[0]) })),
    impressionEventIds: async (tenantId, first, last) =>
      (
        await selectRows(
          pool,
          `SELECT event_id FROM impressions
            WHERE tenant_id = $1 AND seq BETWEEN $2 AND $3 AND event_id IS NOT NULL`,
          [tenantId, first, last],
        )
      ).map(([eventId]) => String(eventId)),
    itemsUpdatedAt: (tenantId, updatedAt) => itemsUpdatedAt(pool, tenantId, updatedAt),
    document: async (tenantId, kind, key) => {
      const rows = await selectRows(
        pool,
        'SELECT doc::text FROM config_documents WHERE tenant_id = $1 AND kind = $2 AND key = $3',
        [tenantId, kind, key],
      );
      return rows.length === 0 ? undefined : (JSON.parse(String(rows[0][0])) as unknown);
    },
    tenant: async (tenantId) =>
      (await selectRows(pool, 'SELECT 1 FROM tenants WHERE tenant_id = $1', [tenantId])).length > 0,
    credentials: (tenantId) => tenantCredentials(pool, tenantId),
    merged: async (tenantId, userId, sessionId) =>
      (
        await selectRows(
          pool,
          'SELECT 1 FROM merge_ledger WHERE tenant_id = $1 AND user_id = $2 AND session_id = $3',
          [tenantId, userId, sessionId],
        )
      ).length > 0,
  };
}

/** The tenant's items of that update time, a chunk at a time in id order. */
async function* itemsUpdatedAt(pool: Pool, tenantId: string, updatedAt: number) {
  let after = '';
  for (;;) {
    const rows = await selectRows(
      pool,
      `SELECT ${ITEM_COLUMNS} FROM items WHERE tenant_id = $1 AND updated_at = $2 AND external_id > $3
        ORDER BY external_id LIMIT $4`,
      [tenantId, updatedAt, after, CHUNK],
    );
    if (rows.length > 0) yield rows.map((row) => catalogItemFromRow(row));
    if (rows.length < CHUNK) return;
    after = String(rows[rows.length - 1][0]);
  }
}
