import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../../src/store/database.js';
import {
  DEFAULT_DUCKDB_MEMORY_LIMIT,
  defaultDuckDbThreads,
  duckDbSettings,
  memoryLimitOf,
} from '../../../src/store/duckdb-settings.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe("the store's DuckDB limits", () => {
  it('take a memory size with its unit, and say what one looks like otherwise', () => {
    expect(memoryLimitOf('256MB')).toBe('256MB');
    expect(memoryLimitOf(' 1GiB ')).toBe('1GiB');
    expect(memoryLimitOf('2.5GB')).toBe('2.5GB');
    for (const bad of ['256', 'lots', '-1MB', '80%', ''])
      expect(() => memoryLimitOf(bad)).toThrow(/number and a unit/);
  });

  it('come from NEXTREC_DUCKDB_MEMORY_LIMIT and NEXTREC_DUCKDB_THREADS, else the defaults', () => {
    expect(duckDbSettings({})).toEqual({
      memoryLimit: DEFAULT_DUCKDB_MEMORY_LIMIT,
      threads: defaultDuckDbThreads(),
    });
    expect(duckDbSettings({ NEXTREC_DUCKDB_MEMORY_LIMIT: '1GB', NEXTREC_DUCKDB_THREADS: '3' })).toEqual({
      memoryLimit: '1GB',
      threads: 3,
    });
    expect(() => duckDbSettings({ NEXTREC_DUCKDB_THREADS: '0' })).toThrow(/positive integer/);
    expect(() => duckDbSettings({ NEXTREC_DUCKDB_MEMORY_LIMIT: 'much' })).toThrow(/number and a unit/);
    expect(defaultDuckDbThreads()).toBeGreaterThanOrEqual(1);
    expect(defaultDuckDbThreads()).toBeLessThanOrEqual(2);
  });

  it('are what the store opens DuckDB with, and what it reports of its memory', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-duckdb-'));
    dirs.push(dir);
    const store = await DuckDbStore.open(dir, { memoryLimit: '64MB', threads: 1 });
    try {
      const settings = await store.read(async (db) =>
        (
          await db.runAndReadAll(
            "SELECT current_setting('memory_limit'), current_setting('threads'), current_setting('enable_external_file_cache'), current_setting('allocator_flush_threshold'), current_setting('allocator_background_threads')",
          )
        ).getRowsJS(),
      );
      // DuckDB counts in MiB: 64 MB is 61 MiB.
      expect(settings[0]).toEqual(['61.0 MiB', 1n, false, '15.2 MiB', true]);
      const reported = await store.memory();
      if (!('duckdb' in reported)) throw new Error('the DuckDB store reports its memory under `duckdb`');
      const memory = reported.duckdb;
      expect(memory).toMatchObject({ memoryLimit: '64MB', threads: 1, temporary: 0 });
      expect(memory.memory.total).toBeGreaterThanOrEqual(0);
      expect(memory.fileBytes).toBeGreaterThan(0);
      expect(memory.itemKeys).toBe(0);
    } finally {
      await store.close();
    }
  });
});
