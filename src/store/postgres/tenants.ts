import type { TenantOp } from '../api/tenants.js';
import type { Statement } from './statement.js';

export function tenantStatements(op: TenantOp): Statement[] {
  switch (op.op) {
    case 'create':
      // A tenant that exists fails the write, as on DuckDB.
      return [{ text: 'INSERT INTO tenants VALUES ($1, $2)', values: [op.tenantId, op.createdAt] }];
    case 'saveCredential':
      return [
        {
          text: `INSERT INTO credentials VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (tenant_id, kind) DO UPDATE
                 SET secret_hash = excluded.secret_hash, salt = excluded.salt, created_at = excluded.created_at`,
          values: [op.tenantId, op.kind, op.secretHash, op.salt, op.updatedAt],
        },
      ];
  }
}
