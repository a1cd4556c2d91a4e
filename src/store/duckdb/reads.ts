import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Which logs a reader needs in the store (`WriteQueue.settled`): both, the interactions log alone, or
 * neither (for what reads or writes only the daemon's own record, such as the record of answers).
 */
export type SettledLogs = 'all' | 'events' | 'none';

/**
 * Runs a query on a connection of its own once every acknowledged write is in the store (Store.read), or
 * every acknowledged event when `logs` is `events` and the query reads no catalog table:
 * what the DuckDB implementation of each area's reads (src/store/api) is built on.
 */
export type ReadRunner = <T>(query: (db: DuckDBConnection) => Promise<T>, logs?: SettledLogs) => Promise<T>;
