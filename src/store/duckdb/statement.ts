import type { DuckDBListValue } from '@duckdb/node-api';

/** One DuckDB statement with its bound parameters. */
export interface Statement {
  sql: string;
  /** A list (`listValue`) binds as one parameter, for `unnest`. */
  params: (string | number | boolean | null | DuckDBListValue)[];
}
