import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { lakeRoot } from '../../src/lake/layout.js';
import { postgresFiles, TEST_STORE } from './test-store.js';

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/** Those of `files` whose bytes hold `id`: with an id no other id contains, the files that name it. */
export function filesNaming(id: string, files: string[]): string[] {
  return files.filter((file) => readFileSync(file).includes(id));
}

/**
 * The store's files of a data dir's daemon: the DuckDB file and its write-ahead log, or on PostgreSQL
 * the files of its database (test-store.ts).
 */
export async function storeFiles(dataDir: string): Promise<string[]> {
  if (TEST_STORE === 'postgres') return postgresFiles(dataDir);
  return filesUnder(dataDir).filter((file) => path.basename(file).startsWith('nextrec.duckdb'));
}

/** Every file under a tenant's lake folder. */
export function lakeFiles(dataDir: string, tenantId: string): string[] {
  return filesUnder(path.join(lakeRoot(dataDir), tenantId));
}
