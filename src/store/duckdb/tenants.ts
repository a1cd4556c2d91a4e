import type { TenantOp } from '../api/tenants.js';
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
