import { statSync } from 'node:fs';
import type { DuckDbStore } from './database.js';
import { duckDbMemory } from './duckdb-memory.js';

/** What the store's DuckDB holds (docs/memory.md), in bytes. */
export interface StoreMemory {
  memoryLimit: string;
  threads: number;
  /** DuckDB's own count (`duckdb_memory()`): the buffer pool's memory by what it holds, the total first. */
  memory: Record<string, number>;
  /** Spilled to disk beyond the limit. */
  temporary: number;
  /** The store file and its write-ahead log, on disk. */
  fileBytes: number;
  walBytes: number;
  /** Item ids whose keys the write queue keeps in the event loop's heap (see item-keys.ts). */
  itemKeys: number;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export async function storeMemory(store: DuckDbStore): Promise<StoreMemory> {
  const { memory, temporary } = await store.read(duckDbMemory);
  return {
    memoryLimit: store.settings.memoryLimit,
    threads: store.settings.threads,
    memory,
    temporary,
    fileBytes: sizeOf(store.file),
    walBytes: sizeOf(`${store.file}.wal`),
    itemKeys: store.writes.itemKeyCount,
  };
}
