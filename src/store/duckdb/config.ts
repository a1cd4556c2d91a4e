import type { ConfigOp } from '../api/config.js';
import type { Statement } from './statement.js';

export function configStatements(op: ConfigOp): Statement[] {
  switch (op.op) {
    case 'save':
      return [
        {
          sql: 'INSERT OR REPLACE INTO config_documents VALUES ($1, $2, $3, $4, $5)',
          params: [op.tenantId, op.kind, op.key, JSON.stringify(op.document), op.updatedAt],
        },
      ];
    case 'delete':
      return [
        {
          sql: 'DELETE FROM config_documents WHERE tenant_id = $1 AND kind = $2 AND key = $3',
          params: [op.tenantId, op.kind, op.key],
        },
      ];
  }
}
