import type { TenantReads } from '../store/api/tenants.js';
import type { CredentialKind, CredentialRegistry } from './credentials.js';

/** Fills the credential registry from the store (at start). */
export async function loadCredentials(tenants: TenantReads, credentials: CredentialRegistry): Promise<void> {
  for (const { tenantId, kind, secretHash, salt } of await tenants.credentials()) {
    credentials.set({ tenantId, kind: kind as CredentialKind, secretHash, salt });
  }
}
