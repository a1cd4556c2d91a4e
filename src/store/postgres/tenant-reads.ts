import type { Pool } from 'pg';
import type { StoredCredential, TenantReads } from '../api/tenants.js';
import { inSnapshot, selectRows } from './read-rows.js';

const CREDENTIALS = 'SELECT tenant_id, kind, secret_hash, salt FROM credentials';

/** Credentials as the rows CREDENTIALS selects. */
export function credentialsOf(rows: unknown[][]): StoredCredential[] {
  return rows.map(([tenantId, kind, secretHash, salt]) => ({
    tenantId: String(tenantId),
    kind: String(kind),
    secretHash: String(secretHash),
    salt: String(salt),
  }));
}

/** The rows of the tenant's credentials. */
export function tenantCredentials(pool: Pool, tenantId: string): Promise<StoredCredential[]> {
  return selectRows(pool, `${CREDENTIALS} WHERE tenant_id = $1 ORDER BY kind`, [tenantId]).then(
    credentialsOf,
  );
}

/**
 * Tenants and their credentials, as the DuckDB store reads them (src/store/duckdb/tenants.ts); every read
 * of the exported `snapshot` when one is given (ChangeFeed.snapshot).
 */
export function pgTenantReads(pool: Pool, snapshot?: string): TenantReads {
  const select = (text: string) =>
    snapshot === undefined
      ? selectRows(pool, text)
      : inSnapshot(pool, (client) => selectRows(client, text), snapshot);
  return {
    ids: async () =>
      (await select('SELECT tenant_id FROM tenants ORDER BY tenant_id')).map(([tenantId]) =>
        String(tenantId),
      ),
    // In key order, though no order is promised: the same answer every time.
    credentials: async () => credentialsOf(await select(`${CREDENTIALS} ORDER BY tenant_id, kind`)),
  };
}
