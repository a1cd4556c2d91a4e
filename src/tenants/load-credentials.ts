import type { StoredCredential, TenantReads } from '../store/api/tenants.js';
import type { CredentialKind, CredentialRegistry } from './credentials.js';

/** Stored credentials go into the registry (at start, or as another daemon stored them: src/following/). */
export function credentialsStored(
  credentials: CredentialRegistry,
  stored: readonly StoredCredential[],
): void {
  for (const { tenantId, kind, secretHash, salt } of stored) {
    credentials.set({ tenantId, kind: kind as CredentialKind, secretHash, salt });
  }
}

/** Fills the credential registry from the store (at start). */
export async function loadCredentials(tenants: TenantReads, credentials: CredentialRegistry): Promise<void> {
  credentialsStored(credentials, await tenants.credentials());
}
