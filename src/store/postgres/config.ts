import type { ConfigOp } from '../api/config.js';
import type { Statement } from './statement.js';

export function configStatements(op: ConfigOp): Statement[] {
  switch (op.op) {
    case 'save':
      // The document's text as written (a `json` column, see migrations.ts).
      return [
        {
          text: `INSERT INTO config_documents VALUES ($1, $2, $3, $4::json, $5)
                 ON CONFLICT (tenant_id, kind, key) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`,
          values: [op.tenantId, op.kind, op.key, JSON.stringify(op.document), op.updatedAt],
        },
      ];
    case 'delete':
      return [
        {
          text: 'DELETE FROM config_documents WHERE tenant_id = $1 AND kind = $2 AND key = $3',
          values: [op.tenantId, op.kind, op.key],
        },
      ];
  }
}
