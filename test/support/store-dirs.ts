import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { DuckDbStore } from '../../src/store/database.js';

/** The compiled store, which a child process opens the way the daemon does (`npm test` builds it first). */
export const COMPILED_DATABASE = new URL('../../dist/src/store/database.js', import.meta.url).href;

/**
 * Data dirs and the stores a test file opens on them: each test's are closed and removed after it.
 * `close` stops a store as a daemon's stop does, so that the next `open` of its dir starts afresh.
 */
export function storeDirs(prefix: string) {
  const dirs: string[] = [];
  const stores: DuckDbStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    dataDir(): string {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    async open(dir: string): Promise<DuckDbStore> {
      const store = await DuckDbStore.open(dir);
      stores.push(store);
      return store;
    },
    async close(store: DuckDbStore): Promise<void> {
      await store.close();
      stores.splice(stores.indexOf(store), 1);
    },
  };
}
