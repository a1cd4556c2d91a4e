import type { ConfigOp } from './config.js';
import type { IdentityOp } from './identity.js';
import type { Statement } from '../duckdb/statement.js';
import type { TenantOp } from './tenants.js';

/**
 * What a write asks the store to do beyond upserting items and users and appending events (RowBuffer's
 * typed rows): each area of src/store/api declares its operations (`area` names it, `op` the operation),
 * and each store carries them out in the write's transaction, in order (DuckDB:
 * src/store/duckdb/statements.ts). Nothing outside src/store writes SQL.
 */
export type StoreOp = ConfigOp | TenantOp | IdentityOp | SqlOp;

/**
 * A raw DuckDB statement, for the store's own tests only: lint refuses it elsewhere, and the PostgreSQL
 * store refuses to carry it out. Everything the daemon writes is a typed operation of its area.
 */
export interface SqlOp {
  area: 'sql';
  statement: Statement;
}

export function sqlOp(statement: Statement): SqlOp {
  return { area: 'sql', statement };
}
