import type { StoredCredential, TenantOp, TenantReads } from '../api/tenants.js';
import type { ReadRunner } from './reads.js';
import type { Statement } from './statement.js';

export function tenantStatements(op: TenantOp): Statement[] {
  switch (op.op) {
    case 'create':
      return [{ sql: 'INSERT INTO tenants VALUES ($1, $2)', params: [op.tenantId, op.createdAt] }];
    case 'saveCredential':
      return [
        {
          sql: 'INSERT OR REPLACE INTO credentials VALUES ($1, $2, $3, $4, $5)',
          params: [op.tenantId, op.kind, op.secretHash, op.salt, op.updatedAt],
        },
      ];
  }
}

export function duckDbTenantReads(read: ReadRunner): TenantReads {
  return {
    ids: () =>
      read(async (db) => {
        const reader = await db.runAndReadAll('SELECT tenant_id FROM tenants ORDER BY tenant_id');
        return reader.getRowsJS().map(([tenantId]) => String(tenantId));
      }),
    credentials: () =>
      read(async (db) => {
        const reader = await db.runAndReadAll('SELECT tenant_id, kind, secret_hash, salt FROM credentials');
        return reader.getRowsJS().map(([tenantId, kind, secretHash, salt]): StoredCredential => ({
          tenantId: String(tenantId),
          kind: String(kind),
          secretHash: String(secretHash),
          salt: String(salt),
        }));
      }),
  };
}
