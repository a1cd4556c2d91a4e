import type { DuckDBConnection } from '@duckdb/node-api';
import type { CredentialKind, CredentialRegistry } from './credentials.js';

/** Fills the credential registry from the store (at start). */
export async function loadCredentials(db: DuckDBConnection, credentials: CredentialRegistry): Promise<void> {
  const reader = await db.runAndReadAll('SELECT tenant_id, kind, secret_hash, salt FROM credentials');
  for (const [tenantId, kind, secretHash, salt] of reader.getRowsJS()) {
    credentials.set({
      tenantId: String(tenantId),
      kind: kind as CredentialKind,
      secretHash: String(secretHash),
      salt: String(salt),
    });
  }
}
