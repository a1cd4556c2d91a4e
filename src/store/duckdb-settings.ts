import { availableParallelism } from 'node:os';
import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * How much of the machine the store's DuckDB may take (docs/memory.md). Without a limit, DuckDB lets
 * its buffer pool grow to 80% of the machine's memory and keeps what it grew to; the daemon's serving
 * state lives beside it, in the same process.
 */
export interface DuckDbSettings {
  /**
   * DuckDB's `memory_limit`: its buffer pool (the store's pages it keeps) and the memory of its queries
   * (aggregates and joins of analytics, lake exports) stay within it; a query that needs more spills to
   * `<store file>.tmp`, and fails only if what it holds cannot spill.
   */
  memoryLimit: string;
  /** DuckDB's `threads`: how many threads one query may run on. */
  threads: number;
}

/**
 * 256 MB: the store's own pages are small (its 2 million interactions take 45 MB on disk, compressed),
 * and the heaviest queries the daemon runs (analytics over millions of events, the lake export) stay
 * well within it (bench/memory and bench/analytics).
 */
export const DEFAULT_DUCKDB_MEMORY_LIMIT = '256MB';

/**
 * Two, or one on a single core: the daemon's event loop and ranking thread need the cores too, and every
 * DuckDB thread keeps memory of its own for the queries it runs. Commits append on one thread whatever
 * this is; two halve the time of the analytics queries and lake exports that scan millions of rows.
 */
export function defaultDuckDbThreads(): number {
  return Math.min(2, availableParallelism());
}

/**
 * Runs `work` with DuckDB's `threads` at one, then sets it back to `threads`. The setting is the
 * instance's, so a query that runs meanwhile on another connection runs on one thread too. The logs'
 * moves run so: on more threads they took more CPU in all, and the event loop's core with it, for the
 * few rows a move holds while the daemon serves (bench/ingest, bench/soak).
 */
export async function onOneThread<T>(
  connection: DuckDBConnection,
  threads: number,
  work: () => Promise<T>,
): Promise<T> {
  await connection.run('SET threads = 1');
  try {
    return await work();
  } finally {
    // Failing to restore it leaves queries on one thread, slower but right; the work stands.
    await connection.run(`SET threads = ${threads}`).catch(() => undefined);
  }
}

/** A DuckDB memory size: a number and a unit (`512MB`, `1GiB`, `2.5GB`). */
const MEMORY_SIZE = /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i;

/** The memory limit as written, or an error that says what a limit looks like. */
export function memoryLimitOf(text: string): string {
  const trimmed = text.trim();
  if (!MEMORY_SIZE.test(trimmed))
    throw new Error(`a DuckDB memory limit is a number and a unit (256MB, 1GB, 512MiB), not '${text}'`);
  return trimmed;
}

/** The settings from the environment (NEXTREC_DUCKDB_MEMORY_LIMIT, NEXTREC_DUCKDB_THREADS), else defaults. */
export function duckDbSettings(env: NodeJS.ProcessEnv = process.env): DuckDbSettings {
  const limit = env.NEXTREC_DUCKDB_MEMORY_LIMIT;
  const threads = env.NEXTREC_DUCKDB_THREADS;
  const count = threads === undefined || threads === '' ? defaultDuckDbThreads() : Number(threads);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`NEXTREC_DUCKDB_THREADS must be a positive integer, not '${threads}'`);
  return {
    memoryLimit: limit === undefined || limit === '' ? DEFAULT_DUCKDB_MEMORY_LIMIT : memoryLimitOf(limit),
    threads: count,
  };
}

/**
 * The options `DuckDBInstance.create` takes for these settings. DuckDB's cache of the external files it
 * read is off: the daemon reads its lake's Parquet files only to merge or rewrite them, never twice, and
 * the cache kept what it read (40 MB after ten minutes of bench/memory's soak) until the memory limit.
 * DuckDB's allocator gives back what a query freed once the query allocated 16 MB (by default, only
 * beyond 128 MB), and purges in a thread of its own: a sort of 500,000 events left the process 110 MB
 * larger after it ended, 50 MB with these.
 */
export function instanceOptions(settings: DuckDbSettings): Record<string, string> {
  return {
    memory_limit: settings.memoryLimit,
    threads: String(settings.threads),
    enable_external_file_cache: 'false',
    allocator_flush_threshold: '16MB',
    allocator_bulk_deallocation_flush_threshold: '16MB',
    allocator_background_threads: 'true',
  };
}
