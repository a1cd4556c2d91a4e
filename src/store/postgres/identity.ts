import type { IdentityOp } from '../api/identity.js';
import { ERASE_IDENTITIES_FROM_LOG } from './change-log.js';
import type { Statement } from './statement.js';

/** The rows of the identities `$2` (an array) of the tenant `$1` in each table (IdentityOp). */
const ROWS_OF_IDENTITIES = {
  users: 'tenant_id = $1 AND external_id = ANY($2)',
  interactions: 'tenant_id = $1 AND (user_id = ANY($2) OR session_id = ANY($2))',
  impressions: 'tenant_id = $1 AND user_id = ANY($2)',
  merge_ledger: 'tenant_id = $1 AND (user_id = ANY($2) OR session_id = ANY($2))',
};

export function identityStatements(op: IdentityOp): Statement[] {
  switch (op.op) {
    case 'recordMerge':
      return [
        {
          text: `INSERT INTO merge_ledger VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (tenant_id, user_id, session_id) DO UPDATE
                 SET events_copied = excluded.events_copied, merged_at = excluded.merged_at`,
          values: [op.tenantId, op.userId, op.sessionId, op.eventsCopied, op.mergedAt],
        },
      ];
    case 'forgetIdentities':
      return [
        ...Object.entries(ROWS_OF_IDENTITIES).map(([table, rows]) => `DELETE FROM ${table} WHERE ${rows}`),
        ...ERASE_IDENTITIES_FROM_LOG,
      ].map((text) => ({ text, values: [op.tenantId, op.identities] }));
  }
}
