import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { DuckDbFigures } from '../api/memory.js';
import { duckDbMemory } from '../duckdb-memory.js';
import { instanceOptions, type DuckDbSettings } from '../duckdb-settings.js';

/** Where the lake's in-memory DuckDB spills beyond its memory limit: beside the lake, in the data dir. */
export function lakeSpillDir(dataDir: string): string {
  return path.join(dataDir, 'lake.tmp');
}

/**
 * The in-memory DuckDB the PostgreSQL store writes the lake's Parquet files with: opened at the first
 * export of a data dir and kept (opening one takes tens of milliseconds), a connection for each export or
 * rewrite, and within the DuckDB limits given (docs/memory.md). Nothing of it outlives the process: what
 * it holds between two exports is its buffer pool's free pages, and it spills to `lakeSpillDir`.
 */
export class LakeDuckDb {
  private readonly instances = new Map<string, Promise<DuckDBInstance>>();

  constructor(private readonly settings: DuckDbSettings) {}

  /** Runs `work` on a connection of its own, of the data dir's instance. */
  async run<T>(dataDir: string, work: (db: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await (await this.instance(dataDir)).connect();
    try {
      return await work(connection);
    } finally {
      connection.closeSync();
    }
  }

  private instance(dataDir: string): Promise<DuckDBInstance> {
    const key = path.resolve(dataDir);
    let opening = this.instances.get(key);
    if (!opening) {
      opening = DuckDBInstance.create(':memory:', {
        ...instanceOptions(this.settings),
        temp_directory: lakeSpillDir(key),
      });
      this.instances.set(key, opening);
      opening.catch(() => this.instances.delete(key));
    }
    return opening;
  }

  /** What its instances hold, summed; null before the first export opened one. */
  async memory(): Promise<DuckDbFigures | null> {
    if (this.instances.size === 0) return null;
    const total: DuckDbFigures = {
      memoryLimit: this.settings.memoryLimit,
      threads: this.settings.threads,
      memory: { total: 0 },
      temporary: 0,
    };
    for (const dataDir of this.instances.keys()) {
      const { memory, temporary } = await this.run(dataDir, duckDbMemory);
      for (const [tag, bytes] of Object.entries(memory)) total.memory[tag] = (total.memory[tag] ?? 0) + bytes;
      total.temporary += temporary;
    }
    return total;
  }

  /** Closes its instances; call it once no export runs. */
  async close(): Promise<void> {
    const opened = [...this.instances.values()];
    this.instances.clear();
    for (const opening of opened) {
      const instance = await opening.catch(() => undefined);
      instance?.closeSync();
    }
  }
}
