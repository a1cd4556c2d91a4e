import type { StoreOp } from '../api/ops.js';
import type { Statement } from './statement.js';
import { configStatements } from './config.js';
import { tenantStatements } from './tenants.js';
import { identityStatements } from './identity.js';

/** The SQL that carries out one store operation on DuckDB, run in the write's transaction in order. */
export function statementsOf(op: StoreOp): Statement[] {
  switch (op.area) {
    case 'config':
      return configStatements(op);
    case 'tenants':
      return tenantStatements(op);
    case 'identity':
      return identityStatements(op);
    case 'sql':
      return [op.statement];
  }
}
