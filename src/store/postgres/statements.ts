import type { StoreOp } from '../api/ops.js';
import { configStatements } from './config.js';
import { identityStatements } from './identity.js';
import type { Statement } from './statement.js';
import { tenantStatements } from './tenants.js';

/** The SQL that carries out one store operation on PostgreSQL, run in the write's transaction in order. */
export function statementsOf(op: StoreOp): Statement[] {
  switch (op.area) {
    case 'config':
      return configStatements(op);
    case 'tenants':
      return tenantStatements(op);
    case 'identity':
      return identityStatements(op);
    default:
      return foreign(op);
  }
}

/**
 * A DuckDB statement written outside src/store (`sqlOp`, transitional: src/store/api/ops.ts) has no
 * PostgreSQL form. Typed so that an area's operations missing above fail the type check.
 */
function foreign(op: Extract<StoreOp, { area: 'sql' }>): never {
  throw new Error(`a DuckDB statement (store operation of area '${op.area}') cannot run on PostgreSQL`);
}
