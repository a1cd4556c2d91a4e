import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Runs a query on a connection of its own once every acknowledged write is in the store (Store.read):
 * what the DuckDB implementation of each area's reads (src/store/api) is built on.
 */
export type ReadRunner = <T>(query: (db: DuckDBConnection) => Promise<T>) => Promise<T>;
