import { interactionsCommitted } from '../ingestion/events.js';
import { provisionUser, usersCommitted } from '../ingestion/users.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import type { StoredInteraction, StoredUser } from '../store/rows.js';
import { recordMerge } from '../store/api/identity.js';

export interface MergeResult {
  merged: number;
  alreadyMerged: boolean;
}

/** The sessions' committed events as a merge copies them (IdentityReads.sessionEvents), by session. */
async function sessionEvents(
  runtime: Runtime,
  tenantId: string,
  sessionIds: string[],
): Promise<Map<string, StoredInteraction[]>> {
  const bySession = new Map<string, StoredInteraction[]>();
  for (const event of await runtime.store.identity.sessionEvents(tenantId, sessionIds)) {
    const session = event.sessionId!;
    let events = bySession.get(session);
    if (!events) bySession.set(session, (events = []));
    events.push(event);
  }
  return bySession;
}

/**
 * Copies the events of anonymous sessions to a user (spec, "Identity merge"), once per user and session:
 * the merge ledger remembers each pair, so a repeat copies nothing and answers `alreadyMerged`, and of
 * two identical merges at once only the first copies (both pass through the write queue in order).
 * Copies keep the session id, are marked as copies, and count in the user's history from their commit.
 * With `on_identity_merge`, the user gets a minimal user row.
 */
export async function mergeIdentity(
  runtime: Runtime,
  tenant: TenantState,
  userId: string,
  sessionIds: string[],
): Promise<MergeResult> {
  const sessions = [...new Set(sessionIds)].filter((session) => session !== userId);
  const fresh = sessions.filter((session) => !tenant.hasMerged(userId, session));
  if (fresh.length === 0) return { merged: 0, alreadyMerged: true };
  const events = await sessionEvents(runtime, tenant.tenantId, fresh);
  return runtime.store.writes.submit((rows, scratch) => {
    const receivedAt = Date.now();
    const merged: string[] = [];
    const copies: StoredInteraction[] = [];
    for (const session of fresh) {
      const claim = `merge\u0000${tenant.tenantId}\u0000${userId}\u0000${session}`;
      if (tenant.hasMerged(userId, session) || scratch.has(claim)) continue;
      scratch.set(claim, true);
      const copied = (events.get(session) ?? []).map((event): StoredInteraction => ({
        ...event,
        userId,
        receivedAt,
        merged: true,
      }));
      for (const copy of copied) rows.interactions.push([tenant.tenantId, copy]);
      copies.push(...copied);
      rows.ops.push(recordMerge(tenant.tenantId, userId, session, copied.length, receivedAt));
      merged.push(session);
    }
    let provisioned: StoredUser | undefined;
    if (merged.length > 0 && tenant.settings.userProvisioningModes.includes('on_identity_merge')) {
      provisioned = provisionUser(rows, scratch, tenant, userId, receivedAt);
    }
    return () => {
      if (merged.length === 0) return { merged: 0, alreadyMerged: true };
      for (const session of merged) tenant.recordMerge(userId, session);
      // Copies carry no event id (IdentityReads.sessionEvents): the store stores every one.
      interactionsCommitted(runtime, tenant, copies);
      if (provisioned) usersCommitted(tenant, [provisioned]);
      return { merged: copies.length, alreadyMerged: false };
    };
  });
}
