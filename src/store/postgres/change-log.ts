import type { Statement } from './statement.js';

/** One entry of a tenant's change log: what kind of change, and what a follower needs to apply it. */
export interface Change {
  kind: string;
  payload: unknown;
}

/**
 * Appends changes to the tenant's log (migrations.ts, version 2) with the next numbers of the tenant's
 * counter, in the write's transaction. The counter's row stays locked until that transaction ends, so a
 * second writer of the tenant waits there for the first to commit: put this last in the transaction, to
 * hold the tenant's writes back no longer than the commit. A tenant's first change creates its counter.
 */
export function changeLogStatement(tenantId: string, changes: readonly Change[]): Statement {
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
      changes.map((change) => JSON.stringify(change.payload)),
    ],
  };
}
