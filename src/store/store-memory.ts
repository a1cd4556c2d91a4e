import { statSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from './database.js';

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

/** DuckDB's own count, read on `db`: `memory` by tag (those above 0, the total first), and what it spilled. */
export async function duckDbMemory(db: DuckDBConnection): Promise<Pick<StoreMemory, 'memory' | 'temporary'>> {
  const rows = (
    await db.runAndReadAll(
      'SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory() ORDER BY tag',
    )
  ).getRowsJS();
  const memory: Record<string, number> = { total: 0 };
  let temporary = 0;
  for (const [tag, used, spilled] of rows) {
    const bytes = Number(used);
    memory.total += bytes;
    if (bytes > 0) memory[String(tag)] = bytes;
    temporary += Number(spilled);
  }
  return { memory, temporary };
}

export async function storeMemory(store: Store): Promise<StoreMemory> {
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
