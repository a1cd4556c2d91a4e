import type { StoreChange } from '../api/changes.js';
import { identityHash } from '../identity-hash.js';
import type { Statement } from './statement.js';

/** The channel a write's transaction notifies at commit, with the tenant's id, for followers to read. */
export const CHANGES_CHANNEL = 'nextrec_changes';

/**
 * A change as the log keeps it: the change, the store (an id per opened store) that wrote it, and when
 * (epoch ms: the log keeps RETENTION_MS of changes, change-feed.ts).
 */
export type LoggedChange = StoreChange & { origin: string; at: number };

/**
 * Appends changes to the tenant's log (migrations.ts, version 2) with the next numbers of the tenant's
 * counter, in the write's transaction, each with the id of the store that writes it (`origin`): a
 * daemon passes over its own. The counter's row stays locked until that transaction ends, so a second
 * writer of the tenant waits there for the first to commit: put this last in the transaction, to hold
 * the tenant's writes back no longer than the commit. A tenant's first change creates its counter.
 */
export function changeLogStatement(
  tenantId: string,
  origin: string,
  changes: readonly StoreChange[],
): Statement {
  return {
    text: `WITH counter AS (
             INSERT INTO change_counters AS c VALUES ($1, $2)
             ON CONFLICT (tenant_id) DO UPDATE SET seq = c.seq + excluded.seq
             RETURNING c.seq)
           INSERT INTO change_log
           SELECT $1, counter.seq - $2 + change.n, change.kind, change.payload
             FROM counter, unnest($3::text[], $4::jsonb[]) WITH ORDINALITY AS change(kind, payload, n)`,
    values: [
      tenantId,
      changes.length,
      changes.map((change) => change.kind),
      changes.map((change) => JSON.stringify({ ...change, origin, at: Date.now() })),
    ],
  };
}

/**
 * Wakes the daemons that listen (change-feed.ts) once the transaction commits, with `origin tenantId`:
 * PostgreSQL delivers a transaction's notifications at its commit, and none of one that rolls back.
 */
export function notifyStatement(origin: string, tenantIds: readonly string[]): Statement {
  return {
    text: `SELECT pg_notify($1, $2 || ' ' || t) FROM unnest($3::text[]) AS t`,
    values: [CHANGES_CHANNEL, origin, tenantIds],
  };
}

/** The statements that log `changes` of each tenant and notify the followers, last in a transaction. */
export function logChanges(
  origin: string,
  changes: ReadonlyMap<string, readonly StoreChange[]>,
): Statement[] {
  // In the order of the tenants' ids: two writers lock the counters in one order (flush.ts, inKeyOrder).
  const tenants = [...changes.keys()].filter((t) => changes.get(t)!.length > 0).sort(codePoints);
  if (tenants.length === 0) return [];
  return [
    ...tenants.map((tenantId) => changeLogStatement(tenantId, origin, changes.get(tenantId)!)),
    notifyStatement(origin, tenants),
  ];
}

/** Strings in the order of their UTF-16 code units, as both inKeyOrder (flush.ts) and the log lock them. */
export function codePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The hashes a change names deleted ids by (identityHash, as text: a bigint does not fit JSON). */
export function hashesOf(ids: readonly string[]): string[] {
  return ids.map((id) => identityHash(id).toString());
}

/**
 * What erasing identities (`$2`, a text array) of the tenant `$1` does to the log, in the deletion's
 * transaction: the earlier changes stop naming them (users upserted lose their ids, the merges of them
 * go), so that nothing in the store names them once the store is scrubbed (docs/guide.md, "Identity").
 * A follower that had not read those changes yet reads the deletion after them.
 */
export const ERASE_IDENTITIES_FROM_LOG = [
  `UPDATE change_log SET payload = jsonb_set(payload, '{userIds}', (payload->'userIds') - $2::text[])
    WHERE tenant_id = $1 AND kind = 'users' AND payload->'userIds' ?| $2::text[]`,
  // Emptied rather than removed: a follower tells a gap in the numbers from changes it missed.
  `UPDATE change_log
      SET kind = 'erased', payload = jsonb_build_object('kind', 'erased', 'tenantId', tenant_id, 'at', payload->'at')
    WHERE tenant_id = $1 AND kind = 'op' AND payload->'op'->>'op' = 'recordMerge'
      AND (payload->'op'->>'userId' = ANY($2) OR payload->'op'->>'sessionId' = ANY($2))`,
];

/** The same for removed items (`$2`) of the tenant `$1`: the changes that upserted them stop naming them. */
export const ERASE_ITEMS_FROM_LOG = `UPDATE change_log
    SET payload = jsonb_set(payload, '{itemIds}', (payload->'itemIds') - $2::text[])
  WHERE tenant_id = $1 AND kind = 'items' AND payload->'itemIds' ?| $2::text[]`;
