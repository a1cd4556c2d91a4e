import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { latestSnapshot, liveSegments, tableDir } from '../../src/lake/layout.js';

/** How much of the machine a job's DuckDB may take (docs/batch-models.md). */
export interface LakeDbOptions {
  memoryLimit: string;
  threads: number;
}

export const DEFAULT_LAKE_DB: LakeDbOptions = { memoryLimit: '1GB', threads: 2 };

/** The lake tables as a job reads them, when the lake has none of their files yet. */
const EMPTY = {
  interactions: `SELECT NULL::BIGINT AS seq, NULL::VARCHAR AS event_id, NULL::VARCHAR AS user_id,
    NULL::VARCHAR AS session_id, NULL::VARCHAR AS item_id, NULL::VARCHAR AS type, NULL::DOUBLE AS weight,
    NULL::VARCHAR AS scenario_slug, NULL::VARCHAR AS country, NULL::BIGINT AS ts, NULL::BIGINT AS received_at,
    NULL::DOUBLE AS amount, NULL::DOUBLE AS price, NULL::DOUBLE AS profit LIMIT 0`,
  items: `SELECT NULL::VARCHAR AS external_id, NULL::VARCHAR AS category, NULL::VARCHAR AS attributes,
    NULL::VARCHAR AS expires_at, NULL::BOOLEAN AS available, NULL::BOOLEAN AS feed_managed,
    NULL::BIGINT AS created_at, NULL::BIGINT AS updated_at LIMIT 0`,
};

function quoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * The spill folders of the lakes open in this process. A process that exits with lakes open (a build
 * ended by `process.exit`, on a signal or when its starter ended) removes them as it exits.
 */
const spillDirs = new Set<string>();
process.on('exit', () => {
  for (const dir of spillDirs) removeSpillDir(dir);
});

function removeSpillDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  spillDirs.delete(dir);
}

/** An in-memory DuckDB with a spill folder of its own. */
export class LakeInstance {
  private constructor(
    readonly instance: DuckDBInstance,
    private readonly spillDir: string,
  ) {}

  static async create(options: LakeDbOptions = DEFAULT_LAKE_DB): Promise<LakeInstance> {
    // A folder of its own, even for two lakes opened within the same millisecond.
    const spillDir = mkdtempSync(path.join(tmpdir(), `nextrec-job-${process.pid}-`));
    spillDirs.add(spillDir);
    try {
      const instance = await DuckDBInstance.create(':memory:', {
        memory_limit: options.memoryLimit,
        threads: String(options.threads),
        temp_directory: spillDir,
      });
      return new LakeInstance(instance, spillDir);
    } catch (error) {
      removeSpillDir(spillDir);
      throw error;
    }
  }

  close(): void {
    this.instance.closeSync();
    removeSpillDir(this.spillDir);
  }
}

/**
 * An in-memory DuckDB whose views `interactions` and `items` read one tenant's lake files: a job never
 * opens the live store (the daemon holds it), only the Parquet files exported from it. A lake opened on a
 * tenant's files is a connection of its own, whose views (and the jobs' tables) are temporary, so that
 * lakes opened one after another may share one DuckDB (`shared`: the quick build process's, docs/batch-models.md) and leave nothing in it when they close; a lake opened without one has a DuckDB of its
 * own, closed with it.
 */
export class LakeDb {
  /** The lake this one reads, when it reads one (a scratch lake reads none). */
  location?: { dataDir: string; tenantId: string };
  /** The lake's files the views read, as they were listed when it was opened. */
  private files: string[] = [];

  private constructor(
    readonly db: DuckDBConnection,
    /** The DuckDB to close with the lake, when it is the lake's own. */
    private readonly own: LakeInstance | undefined,
  ) {}

  private static async create(options: LakeDbOptions, shared?: LakeInstance): Promise<LakeDb> {
    if (shared) return new LakeDb(await shared.instance.connect(), undefined);
    const own = await LakeInstance.create(options);
    try {
      return new LakeDb(await own.instance.connect(), own);
    } catch (error) {
      own.close();
      throw error;
    }
  }

  static async open(
    dataDir: string,
    tenantId: string,
    options: LakeDbOptions = DEFAULT_LAKE_DB,
    shared?: LakeInstance,
  ): Promise<LakeDb> {
    const lake = await LakeDb.create(options, shared);
    lake.location = { dataDir, tenantId };
    const { db } = lake;
    try {
      const segments = liveSegments(tableDir(dataDir, tenantId, 'interactions'));
      await db.run(
        `CREATE TEMP VIEW interactions AS ${
          segments.length
            ? // By name: a segment written before a column was added reads it as NULL.
              `SELECT * FROM read_parquet([${segments.map((s) => quoted(s.file)).join(', ')}], union_by_name = true)`
            : EMPTY.interactions
        }`,
      );
      const items = latestSnapshot(tableDir(dataDir, tenantId, 'items'));
      await db.run(
        `CREATE TEMP VIEW items AS ${items ? `SELECT * FROM read_parquet(${quoted(items.file)})` : EMPTY.items}`,
      );
      lake.files = [...segments.map((segment) => segment.file), ...(items ? [items.file] : [])];
    } catch (error) {
      lake.close();
      throw error;
    }
    return lake;
  }

  /**
   * A lake of no files whose `interactions` a caller fills (`nextrec evaluate` puts a train part there),
   * in a DuckDB of its own, where its views and tables are not temporary.
   */
  static async scratch(options: LakeDbOptions = DEFAULT_LAKE_DB): Promise<LakeDb> {
    const lake = await LakeDb.create(options);
    await lake.db.run(`CREATE VIEW items AS ${EMPTY.items}`);
    await lake.db.run(`CREATE TABLE interactions AS ${EMPTY.interactions}`);
    return lake;
  }

  /** Appends views of weight 1 to a scratch lake's interactions. */
  async appendViews(events: Iterable<{ user: string; item: string; ts: number }>): Promise<void> {
    const appender = await this.db.createAppender('interactions');
    try {
      let seq = 0;
      for (const event of events) {
        appender.appendBigInt(BigInt(++seq));
        appender.appendNull();
        appender.appendVarchar(event.user);
        appender.appendNull();
        appender.appendVarchar(event.item);
        appender.appendVarchar('view');
        appender.appendDouble(1);
        appender.appendNull();
        appender.appendNull();
        appender.appendBigInt(BigInt(Math.round(event.ts)));
        appender.appendBigInt(BigInt(Math.round(event.ts)));
        // No amount, price or profit: views carry none.
        appender.appendNull();
        appender.appendNull();
        appender.appendNull();
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  /** The first column of a query's rows, as text (empty without rows). */
  async texts(sql: string): Promise<string[]> {
    const reader = await this.db.runAndReadAll(sql);
    return (reader.getColumns()[0] ?? []).map(String);
  }

  async count(sql: string): Promise<number> {
    const reader = await this.db.runAndReadAll(sql);
    return Number(reader.getRows()[0][0] ?? 0);
  }

  /**
   * Whether a file the views read is gone since the lake was opened: the daemon's lake export removes the
   * segments a merge covered a minute after the merge, and older snapshots, while a slow build may still
   * be reading them (docs/batch-models.md).
   */
  filesRemoved(): boolean {
    return this.files.some((file) => !existsSync(file));
  }

  close(): void {
    this.db.closeSync();
    this.own?.close();
  }
}
