import { readFileSync } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { OneAtATimePerKey } from '../one-at-a-time.js';
import { QuietTimers } from '../quiet-timers.js';
import {
  EVENT_TABLES,
  SNAPSHOT_TABLES,
  exportedThrough,
  latestSnapshot,
  partitionSegments,
  segmentName,
  snapshotName,
  snapshots,
  tableDir,
  type EventTable,
  type LakeTable,
  type Segment,
  type SnapshotTable,
  vectorConfigFile,
} from '../lake/layout.js';
import { partialName, removeAbandonedPartials, replaceDurablyAsync } from '../durable-files.js';
import type { LakeSnapshot, LakeTables } from './api/lake.js';
import { DISK_FULL_RETRY_MS, isDiskFull } from './disk-full.js';
import { copyToParquet } from './lake-columns.js';
import { sqlString } from './sql.js';
import type { Store } from './store.js';

/** The fields of the vectors job's configuration file in the lake (`vectorConfigFile`, src/lake/layout.ts). */
export type VectorConfigField = 'templates' | 'defaults' | 'scenarios';

/**
 * The kinds of configuration document the vectors job reads, by the field their documents fill: the store
 * knows none, their owners name them (`StoredDocumentKind.vectorConfig`) and the runtime gathers them.
 */
export type VectorConfigKinds = ReadonlyMap<string, VectorConfigField>;

export interface CompactionOptions {
  /** Segments smaller than this are merged... */
  smallBytes: number;
  /** ...once a table has more than this many live segments. */
  maxSegments: number;
  /** Merged-away segments are removed this long after the merge, so a job that listed them can finish. */
  graceMs: number;
}

export const DEFAULT_COMPACTION: CompactionOptions = {
  smallBytes: 8 * 1024 * 1024,
  maxSegments: 16,
  graceMs: 60_000,
};

export interface TableExport {
  table: string;
  /** Rows written by this export (snapshots: the snapshot's rows when one was written, else 0). */
  rows: number;
}

async function scalarRow(db: DuckDBConnection, sql: string): Promise<number[]> {
  const reader = await db.runAndReadAll(sql);
  return reader.getRows()[0].map((value) => Number(value ?? 0));
}

/**
 * Writes `file` with `write`, under a partial name first so readers never see half. The export runs in the
 * daemon while it serves: its renames and removals go through Node's thread pool, as one waits for the
 * disk behind whatever else the machine writes (docs/batch-models.md).
 */
async function writeLakeFile(file: string, write: (partial: string) => Promise<void>): Promise<void> {
  const partial = partialName(file);
  try {
    await write(partial);
    await rename(partial, file);
  } finally {
    await rm(partial, { force: true });
  }
}

async function exportEvents(
  snapshot: LakeSnapshot,
  dataDir: string,
  tenantId: string,
  table: EventTable,
): Promise<number> {
  const dir = tableDir(dataDir, tenantId, table);
  const from = exportedThrough(dir);
  const { rows, through } = await snapshot.events(table, from);
  if (rows === 0) return 0;
  await mkdir(dir, { recursive: true });
  await writeLakeFile(`${dir}/${segmentName(from + 1, through)}`, (file) =>
    snapshot.writeEvents(table, from, through, file),
  );
  return rows;
}

async function exportSnapshot(
  snapshot: LakeSnapshot,
  dataDir: string,
  tenantId: string,
  table: SnapshotTable,
): Promise<number> {
  const dir = tableDir(dataDir, tenantId, table);
  const { rows, updated } = await snapshot.catalog(table);
  const latest = latestSnapshot(dir);
  if (latest) {
    const [oldRows, oldUpdated] = await scalarRow(
      snapshot.files,
      `SELECT count(*), max(updated_at) FROM read_parquet(${sqlString(latest.file)})`,
    );
    if (oldRows === rows && oldUpdated === updated) return 0;
  } else if (rows === 0) return 0;
  await mkdir(dir, { recursive: true });
  const version = Math.max(Date.now(), (latest?.version ?? 0) + 1);
  await writeLakeFile(`${dir}/${snapshotName(version)}`, (file) => snapshot.writeCatalog(table, file));
  // The previous snapshot stays for a job that may be reading it; older ones go.
  for (const old of snapshots(dir).slice(0, -2)) await rm(old.file, { force: true });
  return rows;
}

/**
 * The vector configuration last written or read, by file, with the file's modification time then: an
 * export with nothing new reads no file, only its time, which changes when another daemon sharing the
 * data dir wrote the file since (docs/batch-models.md, "Cluster mode").
 */
const writtenVectorConfigs = new Map<string, { text: string; mtimeMs: number }>();

/** The file's modification time; undefined when it does not exist. */
async function modifiedAt(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Writes the tenant's vector configuration to the lake when it changed. */
async function exportVectorConfig(
  snapshot: LakeSnapshot,
  dataDir: string,
  tenantId: string,
  kinds: VectorConfigKinds,
): Promise<void> {
  const config: Record<VectorConfigField, unknown[]> = {
    templates: [],
    defaults: [],
    scenarios: [],
  };
  for (const { kind, text } of await snapshot.documents([...kinds.keys()]))
    config[kinds.get(kind)!].push(JSON.parse(text));
  const text = JSON.stringify(config);
  const file = vectorConfigFile(dataDir, tenantId);
  const mtimeMs = await modifiedAt(file);
  if (mtimeMs !== undefined && writtenVectorConfigs.get(file)?.mtimeMs !== mtimeMs)
    writtenVectorConfigs.set(file, { text: readFileSync(file, 'utf8'), mtimeMs });
  if (mtimeMs !== undefined && writtenVectorConfigs.get(file)?.text === text) return;
  await mkdir(path.dirname(file), { recursive: true });
  await replaceDurablyAsync(file, text);
  writtenVectorConfigs.set(file, { text, mtimeMs: (await modifiedAt(file)) ?? 0 });
}

/** Merges runs of small segments once there are many, and removes what earlier merges covered. */
async function compact(db: DuckDBConnection, dir: string, options: CompactionOptions): Promise<void> {
  const now = Date.now();
  // Removing covered segments leaves the live ones as they are: one listing serves both steps.
  const { live, covered } = partitionSegments(dir);
  for (const segment of covered) {
    const cover = live.find((other) => other.first <= segment.first && other.last >= segment.last);
    if (!cover || now - (await stat(cover.file)).mtimeMs >= options.graceMs)
      await rm(segment.file, { force: true });
  }
  if (live.length <= options.maxSegments) return;
  let run: Segment[] = [];
  const runs: Segment[][] = [];
  for (const segment of live) {
    if ((await stat(segment.file)).size < options.smallBytes) run.push(segment);
    else {
      if (run.length > 1) runs.push(run);
      run = [];
    }
  }
  if (run.length > 1) runs.push(run);
  for (const merged of runs) {
    const files = merged.map((segment) => sqlString(segment.file)).join(', ');
    await writeLakeFile(`${dir}/${segmentName(merged[0].first, merged.at(-1)!.last)}`, (file) =>
      copyToParquet(
        db,
        // By name: a segment written before a column was added reads it as NULL.
        `SELECT * FROM read_parquet([${files}], union_by_name = true) ORDER BY seq`,
        file,
      ),
    );
  }
}

/**
 * Exports what the store has committed for a tenant and the lake lacks: new events as a segment per table,
 * catalog tables as a new snapshot when they changed (unless `tables` is `events`). Reads one snapshot of
 * the store, so every table is exported as of the same commit.
 */
export async function exportTenantLake(
  store: Store,
  dataDir: string,
  tenantId: string,
  compaction: CompactionOptions = DEFAULT_COMPACTION,
  vectorConfig: VectorConfigKinds = new Map(),
  tables: LakeTables = 'all',
): Promise<TableExport[]> {
  return store.lake.snapshot(
    dataDir,
    tenantId,
    async (snapshot) => {
      const exported: TableExport[] = [];
      for (const table of EVENT_TABLES) {
        exported.push({ table, rows: await exportEvents(snapshot, dataDir, tenantId, table) });
        await compact(snapshot.files, tableDir(dataDir, tenantId, table), compaction);
      }
      if (tables === 'events') return exported;
      for (const table of SNAPSHOT_TABLES) {
        exported.push({ table, rows: await exportSnapshot(snapshot, dataDir, tenantId, table) });
      }
      await exportVectorConfig(snapshot, dataDir, tenantId, vectorConfig);
      return exported;
    },
    tables,
  );
}

/** How a lake file is rewritten without what is erased: the rows it selects, and what is kept of it. */
interface Erasure {
  /** The rows that hold an erased id; a NULL column matches nothing. */
  holding: string;
  /** The rows kept, `$source` standing for the file (default: the rows `holding` does not select). */
  kept?: string;
}

/**
 * The rows of each lake table that belong to one of the identities in the connection's `erase_ids`
 * table.
 */
const ERASED_IDENTITIES: Partial<Record<LakeTable, Erasure>> = {
  interactions: {
    holding:
      'coalesce(user_id IN (SELECT id FROM erase_ids), false) OR coalesce(session_id IN (SELECT id FROM erase_ids), false)',
  },
  impressions: { holding: 'coalesce(user_id IN (SELECT id FROM erase_ids), false)' },
  users: { holding: 'coalesce(external_id IN (SELECT id FROM erase_ids), false)' },
};

/**
 * The rows of each lake table that name one of the items in `erase_ids` (docs/guide.md, "Deleting
 * items"): their interactions and catalog rows go; an impression keeps the other items it showed, in
 * order, and goes when it showed none.
 */
const ERASED_ITEMS: Partial<Record<LakeTable, Erasure>> = {
  interactions: { holding: 'item_id IN (SELECT id FROM erase_ids)' },
  items: { holding: 'external_id IN (SELECT id FROM erase_ids)' },
  impressions: {
    holding: 'list_has_any(item_ids, (SELECT list(id) FROM erase_ids))',
    kept: `WITH shown AS (
        SELECT seq, unnest(item_ids) AS item_id, unnest(range(1, len(item_ids) + 1)) AS position FROM $source),
      kept AS (
        SELECT seq, list(item_id ORDER BY position) AS item_ids FROM shown
         WHERE item_id NOT IN (SELECT id FROM erase_ids) GROUP BY seq)
      SELECT f.* REPLACE (kept.item_ids AS item_ids) FROM $source f JOIN kept USING (seq) ORDER BY seq`,
  },
};

/** Every file of a table that holds rows: live and covered segments, or every snapshot. */
function tableFiles(dir: string, table: LakeTable): string[] {
  if ((EVENT_TABLES as readonly string[]).includes(table)) {
    const { live, covered } = partitionSegments(dir);
    return [...live, ...covered].map((segment) => segment.file);
  }
  return snapshots(dir).map((snapshot) => snapshot.file);
}

/**
 * Rewrites `file` without what `erasure` erases, under the same name (a segment keeps its range even
 * when no row is left: it is written empty, with its columns). Returns whether it had such rows.
 */
async function eraseFromFile(db: DuckDBConnection, file: string, erasure: Erasure): Promise<boolean> {
  const source = `read_parquet(${sqlString(file)})`;
  const [matching] = await scalarRow(db, `SELECT count(*) FROM ${source} WHERE ${erasure.holding}`);
  if (matching === 0) return false;
  const kept =
    erasure.kept?.replaceAll('$source', source) ?? `SELECT * FROM ${source} WHERE NOT (${erasure.holding})`;
  await writeLakeFile(file, (partial) => copyToParquet(db, kept, partial));
  return true;
}

/** Rewrites the tenant's lake files that hold any of `ids` without them; returns how many it rewrote. */
async function eraseIds(
  store: Store,
  dataDir: string,
  tenantId: string,
  ids: readonly string[],
  erasures: Partial<Record<LakeTable, Erasure>>,
): Promise<number> {
  if (ids.length === 0) return 0;
  return store.lake.files(dataDir, async (db) => {
    // The ids go in as values, never as SQL text; the table ends with the connection.
    await db.run('CREATE TEMP TABLE erase_ids (id VARCHAR)');
    const appender = await db.createAppender('erase_ids', 'main', 'temp');
    try {
      for (const id of new Set(ids)) {
        appender.appendVarchar(id);
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
    let rewritten = 0;
    for (const [table, erasure] of Object.entries(erasures) as [LakeTable, Erasure][]) {
      const dir = tableDir(dataDir, tenantId, table);
      removeAbandonedPartials(dir);
      for (const file of tableFiles(dir, table)) if (await eraseFromFile(db, file, erasure)) rewritten++;
    }
    return rewritten;
  });
}

/**
 * Removes every row of the given identities (user or session ids, and the users of those external ids)
 * from a tenant's lake by rewriting the files that hold any; the others are not touched. Returns how many
 * files were rewritten. Delete the rows from the store first, or the next export brings them back; and
 * run it through `LakeExporter.erase` when an exporter may be exporting the tenant.
 */
export function eraseFromLake(
  store: Store,
  dataDir: string,
  tenantId: string,
  identities: string[],
): Promise<number> {
  return eraseIds(store, dataDir, tenantId, identities, ERASED_IDENTITIES);
}

/**
 * Removes deleted items from a tenant's lake (see ERASED_ITEMS), as `eraseFromLake` removes identities,
 * on the same conditions: the store first, and through `LakeExporter.eraseItems` beside an exporter.
 */
export function eraseItemsFromLake(
  store: Store,
  dataDir: string,
  tenantId: string,
  itemIds: readonly string[],
): Promise<number> {
  return eraseIds(store, dataDir, tenantId, itemIds, ERASED_ITEMS);
}

/** Every tenant the store holds, in id order. */
export function storedTenants(store: Store): Promise<string[]> {
  return store.tenants.ids();
}

/**
 * Keeps the lake a few seconds behind the store: a tenant is exported once its commits pause for
 * `delayMs`, and at least every `maxDelayMs` while they go on, one export of a tenant at a time (docs/batch-models.md): an export `delayMs` after the first commit ran again and again through a bulk load, in
 * small segments, on the CPU the load needed. Tenants export beside each other, so that a small tenant's
 * export, which its model build waits for, never waits for a large one's. `flush` exports a tenant now
 * (model builds and batch jobs ask for it before reading).
 */
export class LakeExporter {
  private readonly due: QuietTimers;
  /** Tenants whose exports are held (`hold`), by how many holds; and those whose export came due meanwhile. */
  private readonly held = new Map<string, number>();
  private readonly dueWhileHeld = new Set<string>();
  private readonly exports = new OneAtATimePerKey();
  private stopped = false;

  /** Exports that found the disk full, due again once their timer fires. */
  private readonly retries = new Map<string, NodeJS.Timeout>();
  /** When each tenant's catalog was last exported (epoch ms), and its catalog exports put off till then. */
  private readonly catalogExported = new Map<string, number>();
  private readonly catalogDue: QuietTimers;
  private following = false;
  private onError: (error: unknown, tenantId: string) => void = () => undefined;

  constructor(
    private readonly store: Store,
    private readonly dataDir: string,
    delayMs = 2_000,
    private readonly maxDelayMs = 30_000,
    /** The configuration documents written for the vectors job (none by default). */
    private readonly vectorConfig: VectorConfigKinds = new Map(),
  ) {
    this.due = new QuietTimers(delayMs, maxDelayMs, (tenantId) => this.exportDue(tenantId));
    this.catalogDue = new QuietTimers(0, maxDelayMs, (tenantId) => this.exportDue(tenantId, 'all'));
  }

  /**
   * An export that follows commits: of the event tables alone while the tenant's catalog was exported
   * less than `maxDelayMs` ago, and of the catalog too once that is over (a catalog export then comes due
   * by itself). An export of the catalog first moves the store's records log, tens of milliseconds of
   * DuckDB however few upserts it holds (docs/guide.md, "Ingestion"); under steady writes a tenant
   * exported every few seconds.
   */
  private exportDue(tenantId: string, tables: LakeTables = this.followedTables(tenantId)): void {
    if (this.held.has(tenantId)) {
      this.dueWhileHeld.add(tenantId);
      return;
    }
    if (tables === 'events') this.catalogLater(tenantId);
    this.flush(tenantId, tables).catch((error: unknown) => this.failed(error, tenantId));
  }

  private followedTables(tenantId: string): LakeTables {
    const exported = this.catalogExported.get(tenantId);
    return exported !== undefined && Date.now() - exported < this.maxDelayMs ? 'events' : 'all';
  }

  /** Makes an export of the tenant's catalog due `maxDelayMs` after its last one, unless one is due. */
  private catalogLater(tenantId: string): void {
    if (this.catalogDue.has(tenantId)) return;
    this.catalogDue.touch(tenantId, {
      notBefore: (this.catalogExported.get(tenantId) ?? 0) + this.maxDelayMs,
    });
  }

  /**
   * An export that followed commits failed: logged, and one that found the disk full comes due again
   * DISK_FULL_RETRY_MS later, until space returns (docs/configuration.md, "Health and metrics").
   */
  private failed(error: unknown, tenantId: string): void {
    this.onError(error, tenantId);
    if (!isDiskFull(error) || this.stopped || this.retries.has(tenantId)) return;
    const retry = setTimeout(() => {
      this.retries.delete(tenantId);
      this.committed(tenantId);
    }, DISK_FULL_RETRY_MS);
    retry.unref();
    this.retries.set(tenantId, retry);
  }

  /** Follows the store's commits from now on; only the daemon does. */
  follow(onError: (error: unknown, tenantId: string) => void): void {
    this.onError = onError;
    this.following = true;
    this.store.writes.onCommitted((tenantIds) => {
      for (const tenantId of tenantIds) this.committed(tenantId);
    });
  }

  /** Called after a tenant's rows were committed. */
  committed(tenantId: string): void {
    if (this.following && !this.stopped) this.due.touch(tenantId);
  }

  /**
   * Holds the tenant's exports that come due until the returned function is called; an export that came
   * due meanwhile runs then. A feed sync holds them (docs/guide.md, "Catalog feeds"): its own first write would
   * otherwise start one in the middle of it, which waits for the sync's apply, then reads its items from
   * the store while the sync takes them into memory. `flush` is not held.
   */
  hold(tenantId: string): () => void {
    this.held.set(tenantId, (this.held.get(tenantId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held.get(tenantId)! - 1;
      if (left > 0) {
        this.held.set(tenantId, left);
        return;
      }
      this.held.delete(tenantId);
      if (this.dueWhileHeld.delete(tenantId) && !this.stopped)
        this.flush(tenantId).catch((error: unknown) => this.failed(error, tenantId));
    };
  }

  /**
   * Runs a write of the tenant's lake once no other write of it runs, in this process or in another
   * sharing the store and the data dir (`store.runners`, docs/batch-models.md, "Cluster mode"): each
   * write starts from what the lake holds then, so two daemons' exports never write overlapping segments.
   */
  private lakeWrite<T>(tenantId: string, write: () => Promise<T>): Promise<T> {
    return this.exports.run(tenantId, () => this.store.runners.exclusive('lake', tenantId, write));
  }

  /**
   * Exports the tenant now, after any export in progress: every table, or the event tables alone (a build
   * that reads no catalog asks for those; the catalog follows within `maxDelayMs`).
   */
  flush(tenantId: string, tables: LakeTables = 'all'): Promise<TableExport[]> {
    return this.lakeWrite(tenantId, () => {
      if (tables === 'all') {
        // What is committed from here on reaches the lake with the next catalog export.
        this.catalogExported.set(tenantId, Date.now());
        this.catalogDue.forget(tenantId);
      }
      return exportTenantLake(
        this.store,
        this.dataDir,
        tenantId,
        DEFAULT_COMPACTION,
        this.vectorConfig,
        tables,
      );
    });
  }

  /**
   * Removes the identities' rows from the tenant's lake (see `eraseFromLake`), after any export in
   * progress and before any later one. Returns how many files were rewritten.
   */
  erase(tenantId: string, identities: string[]): Promise<number> {
    return this.lakeWrite(tenantId, () => eraseFromLake(this.store, this.dataDir, tenantId, identities));
  }

  /** Removes deleted items from the tenant's lake (see `eraseItemsFromLake`), as `erase` does identities. */
  eraseItems(tenantId: string, itemIds: readonly string[]): Promise<number> {
    return this.lakeWrite(tenantId, () => eraseItemsFromLake(this.store, this.dataDir, tenantId, itemIds));
  }

  /** Exports every tenant with pending commits, then stops following commits. */
  async stop(): Promise<void> {
    // Interactions the store's log holds are committed to the store now, and come due with the rest.
    await this.store.writes.settled().catch(() => undefined);
    this.stopped = true;
    for (const retry of this.retries.values()) clearTimeout(retry);
    const pending = new Set([
      ...this.due.keys(),
      ...this.dueWhileHeld,
      ...this.retries.keys(),
      ...this.catalogDue.keys(),
    ]);
    this.retries.clear();
    this.catalogDue.clear();
    this.due.clear();
    this.dueWhileHeld.clear();
    for (const tenantId of pending) await this.flush(tenantId).catch(() => undefined);
    await this.exports.ended();
  }
}

/**
 * Exports the named tenant (or every stored tenant) now: what `nextrec lake export` and `nextrec build`
 * ask of a running daemon, or do on the store when none runs.
 */
export async function exportNow(
  store: Store,
  exporter: LakeExporter,
  tenantId?: string,
): Promise<{ tenantId: string; tables: TableExport[] }[]> {
  const tenants = tenantId ? [tenantId] : await storedTenants(store);
  const exported: { tenantId: string; tables: TableExport[] }[] = [];
  for (const tenant of tenants) exported.push({ tenantId: tenant, tables: await exporter.flush(tenant) });
  return exported;
}
