import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { migrate } from './migrations.js';
import { WriteQueue, type EventSequences } from './write-queue.js';

export const STORE_FILE = 'nextrec.duckdb';

/**
 * The online store: one DuckDB file. Writes go through one connection and the group-commit queue;
 * reads use their own connection so that they see committed snapshots and never wait on a flush.
 */
export class Store {
  readonly writes: WriteQueue;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    sequences: EventSequences,
  ) {
    this.writes = new WriteQueue(writer, sequences);
  }

  static async open(dataDir: string): Promise<Store> {
    mkdirSync(dataDir, { recursive: true });
    const file = path.resolve(dataDir, STORE_FILE);
    // DuckDB silently diverges when one process opens a file twice: share one instance per file.
    const existing = openStores.get(file);
    if (existing) return existing;
    const opening = Store.create(file);
    openStores.set(file, opening);
    opening.catch(() => openStores.delete(file));
    return opening;
  }

  private static async create(file: string): Promise<Store> {
    const instance = await DuckDBInstance.create(file);
    const writer = await instance.connect();
    let sequences: EventSequences;
    try {
      await migrate(writer);
      await writer.run(STAGING_TABLES);
      const last = await writer.runAndReadAll(
        'SELECT (SELECT coalesce(max(seq), 0) FROM interactions), (SELECT coalesce(max(seq), 0) FROM impressions)',
      );
      const [interactions, impressions] = last.getRows()[0].map(Number);
      sequences = { interactions, impressions };
    } catch (error) {
      writer.closeSync();
      instance.closeSync();
      throw error;
    }
    return new Store(file, instance, writer, sequences);
  }

  async read<T>(query: (db: DuckDBConnection) => Promise<T>): Promise<T> {
    const connection = await this.instance.connect();
    try {
      return await query(connection);
    } finally {
      connection.closeSync();
    }
  }

  /** Waits for queued writes, checkpoints and releases the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.drain();
    openStores.delete(this.file);
    await this.writer.run('CHECKPOINT');
    this.writer.closeSync();
    this.instance.closeSync();
  }
}

const openStores = new Map<string, Promise<Store>>();

/** Upserts append to these first, then one INSERT OR REPLACE moves them, keeping upserts set-based. */
const STAGING_TABLES = `
  CREATE TEMP TABLE items_stage AS SELECT * FROM items LIMIT 0;
  CREATE TEMP TABLE users_stage AS SELECT * FROM users LIMIT 0;
`;
