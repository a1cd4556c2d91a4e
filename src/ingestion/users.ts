import type { UserUpsert } from '../contract/ingestion.js';
import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import { rowKey, type RowBuffer, type StoredUser } from '../store/rows.js';
import { mergeAttributes } from './merge-attributes.js';

function stageUser(
  rows: RowBuffer,
  scratch: Map<string, unknown>,
  tenant: TenantState,
  user: StoredUser,
): void {
  const key = rowKey(tenant.tenantId, user.externalId);
  scratch.set(key, user);
  rows.users.set(key, [tenant.tenantId, user]);
}

function currentUser(
  scratch: Map<string, unknown>,
  tenant: TenantState,
  userId: string,
): StoredUser | undefined {
  return (scratch.get(rowKey(tenant.tenantId, userId)) as StoredUser | undefined) ?? tenant.users.get(userId);
}

/** Once users' upserts committed (this daemon's, or another's it follows: src/following/): the state takes them. */
export function usersCommitted(tenant: TenantState, users: readonly StoredUser[]): void {
  for (const user of users) tenant.users.set(user.externalId, user);
}

/** Upserts users; attributes merge key by key like items (a null value removes a key). */
export function upsertUsers(runtime: Runtime, tenant: TenantState, upserts: UserUpsert[]): Promise<number> {
  return runtime.store.writes.submit((rows, scratch) => {
    const now = Date.now();
    const written: StoredUser[] = [];
    for (const upsert of upserts) {
      const current = currentUser(scratch, tenant, upsert.externalId);
      const user: StoredUser = {
        externalId: upsert.externalId,
        attributes: mergeAttributes(current?.attributes, upsert.attributes),
        createdAt: current?.createdAt ?? now,
        updatedAt: now,
      };
      stageUser(rows, scratch, tenant, user);
      written.push(user);
    }
    return () => {
      usersCommitted(tenant, written);
      return upserts.length;
    };
  }, upserts.length);
}

/** Stages a minimal user row unless the user exists or this flush already writes it; returns the row. */
export function provisionUser(
  rows: RowBuffer,
  scratch: Map<string, unknown>,
  tenant: TenantState,
  userId: string,
  now: number,
): StoredUser | undefined {
  if (currentUser(scratch, tenant, userId)) return undefined;
  const user: StoredUser = { externalId: userId, attributes: {}, createdAt: now, updatedAt: now };
  stageUser(rows, scratch, tenant, user);
  return user;
}
