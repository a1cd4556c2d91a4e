import { DuckDbStore } from './database.js';
import type { DuckDbSettings } from './duckdb-settings.js';
import { PgStore } from './postgres/pg-store.js';
import type { Store } from './store.js';

/** Where the store of record lives (docs/configuration.md, "The store"). */
export interface StoreLocation {
  /** `postgres://user:password@host:port/db`: PostgreSQL; none: the DuckDB file in the data dir. */
  url?: string;
  /** The DuckDB store's limits (default: from the environment, docs/memory.md). */
  duckdb?: DuckDbSettings;
}

/** The store's URL could not be used; its message never repeats the URL (it may hold a password). */
export class StoreUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreUrlError';
  }
}

/** The URL as PostgreSQL's, or a StoreUrlError that names what is wrong without repeating it. */
export function checkStoreUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new StoreUrlError('the store must be a URL postgres://user:password@host:port/database');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new StoreUrlError(
      `the store must be a URL postgres://user:password@host:port/database (not ${url.protocol}//)`,
    );
  if (url.hostname === '')
    throw new StoreUrlError('the store URL names no host: postgres://user:password@host:port/database');
  return url;
}

/** Where a URL points, without its credentials: for messages. */
export function storeAddress(url: URL): string {
  return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

/**
 * Opens the store of record: PostgreSQL when `location.url` names one (several daemons may share it),
 * else the embedded DuckDB file in `dataDir`. A PostgreSQL that cannot be reached or refuses the
 * credentials is a StoreUrlError saying so, with the server's address and never the password.
 */
export async function openStore(dataDir: string, location: StoreLocation = {}): Promise<Store> {
  if (location.url === undefined) return DuckDbStore.open(dataDir, location.duckdb);
  const url = checkStoreUrl(location.url);
  try {
    return await PgStore.open(location.url, { duckdb: location.duckdb });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replaceAll(location.url, '<store URL>') : '';
    throw new StoreUrlError(`cannot open the PostgreSQL store at ${storeAddress(url)}: ${reason}`);
  }
}
