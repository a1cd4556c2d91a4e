import { statSync } from 'node:fs';
import type { DuckDbMemory } from '../api/memory.js';
import { duckDbMemory } from '../duckdb-memory.js';
import type { DuckDbSettings } from '../duckdb-settings.js';
import type { ReadRunner } from './reads.js';

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** What the store's DuckDB holds against its limits, its file and log on disk, and the item keys it keeps. */
export async function duckDbStoreMemory(
  read: ReadRunner,
  settings: DuckDbSettings,
  file: string,
  itemKeys: number,
): Promise<DuckDbMemory> {
  // DuckDB's own figures: nothing of the logs needs to be in the store first.
  const { memory, temporary } = await read(duckDbMemory, 'none');
  return {
    memoryLimit: settings.memoryLimit,
    threads: settings.threads,
    memory,
    temporary,
    fileBytes: sizeOf(file),
    walBytes: sizeOf(`${file}.wal`),
    itemKeys,
  };
}
