import type { Pool } from 'pg';
import type { StoredCredential, TenantReads } from '../api/tenants.js';
import { selectRows } from './read-rows.js';

/** Tenants and their credentials, as the DuckDB store reads them (src/store/duckdb/tenants.ts). */
export function pgTenantReads(pool: Pool): TenantReads {
  return {
    ids: async () =>
      (await selectRows(pool, 'SELECT tenant_id FROM tenants ORDER BY tenant_id')).map(([tenantId]) =>
        String(tenantId),
      ),
    // In key order, though no order is promised: the same answer every time.
    credentials: async () =>
      (
        await selectRows(
          pool,
          'SELECT tenant_id, kind, secret_hash, salt FROM credentials ORDER BY tenant_id, kind',
        )
      ).map(([tenantId, kind, secretHash, salt]): StoredCredential => ({
        tenantId: String(tenantId),
        kind: String(kind),
        secretHash: String(secretHash),
        salt: String(salt),
      })),
  };
}
