import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * The lake: Parquet exports of the store under `<data-dir>/lake/<tenant>/<table>/` (see docs/batch-models.md). The daemon (or `nextrec lake export`) writes it; batch jobs read only it.
 *
 * Event tables are append-only, so they are exported as immutable segments, each holding the rows of a
 * range of the store's sequence numbers and named by it. Catalog tables change in place, so they are
 * exported as whole snapshots, a new file when they changed.
 */
export const EVENT_TABLES = ['interactions', 'impressions'] as const;
export const SNAPSHOT_TABLES = ['items', 'users'] as const;
export type EventTable = (typeof EVENT_TABLES)[number];
export type SnapshotTable = (typeof SNAPSHOT_TABLES)[number];
export type LakeTable = EventTable | SnapshotTable;

export const LAKE_DIR = 'lake';

/**
 * What the vectors job reads besides the items (docs/guide.md, "Vectors and search"): the tenant's embedding
 * templates, vector defaults and the quantizations its scenarios ask for, as JSON (VectorConfig).
 */
export const VECTOR_CONFIG_FILE = 'vector-config.json';
const DIGITS = 16;
const SEGMENT = /^(\d{16})-(\d{16})\.parquet$/;
const SNAPSHOT = /^snapshot-(\d{16})\.parquet$/;

export function lakeRoot(dataDir: string): string {
  return path.join(dataDir, LAKE_DIR);
}

export function tableDir(dataDir: string, tenantId: string, table: LakeTable): string {
  return path.join(lakeRoot(dataDir), tenantId, table);
}

export function vectorConfigFile(dataDir: string, tenantId: string): string {
  return path.join(lakeRoot(dataDir), tenantId, VECTOR_CONFIG_FILE);
}

/** The tenants that have a lake folder. */
export function lakeTenants(dataDir: string): string[] {
  const root = lakeRoot(dataDir);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

/** A segment of an event table: the rows whose sequence numbers are first..last. */
export interface Segment {
  file: string;
  first: number;
  last: number;
}

export function segmentName(first: number, last: number): string {
  return `${String(first).padStart(DIGITS, '0')}-${String(last).padStart(DIGITS, '0')}.parquet`;
}

export function snapshotName(version: number): string {
  return `snapshot-${String(version).padStart(DIGITS, '0')}.parquet`;
}

/**
 * The segments that hold the table's rows, oldest first. A segment whose range lies inside another's was
 * merged into it by a compaction that stopped before removing it: it is left out (and `coveredSegments`
 * lists it for removal). Files being written have another name and are never listed.
 */
export function liveSegments(dir: string): Segment[] {
  return partitionSegments(dir).live;
}

export function coveredSegments(dir: string): Segment[] {
  return partitionSegments(dir).covered;
}

/** `liveSegments` and `coveredSegments` from one listing of the folder. */
export function partitionSegments(dir: string): { live: Segment[]; covered: Segment[] } {
  if (!existsSync(dir)) return { live: [], covered: [] };
  const all: Segment[] = [];
  for (const name of readdirSync(dir)) {
    const match = SEGMENT.exec(name);
    if (match) all.push({ file: path.join(dir, name), first: Number(match[1]), last: Number(match[2]) });
  }
  // Widest first among equal starts, so a merged segment is met before the ones it covers.
  all.sort((a, b) => a.first - b.first || b.last - a.last);
  const live: Segment[] = [];
  const covered: Segment[] = [];
  for (const segment of all) {
    const previous = live.at(-1);
    if (previous && segment.last <= previous.last) covered.push(segment);
    else live.push(segment);
  }
  return { live, covered };
}

/** The highest sequence number the table's segments hold (0: none). */
export function exportedThrough(dir: string): number {
  return liveSegments(dir).at(-1)?.last ?? 0;
}

/** The newest snapshot of a catalog table and its version, or undefined. */
export function latestSnapshot(dir: string): { file: string; version: number } | undefined {
  return snapshots(dir).at(-1);
}

/** Every snapshot, oldest first. */
export function snapshots(dir: string): { file: string; version: number }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => ({ name, match: SNAPSHOT.exec(name) }))
    .filter((entry) => entry.match)
    .map((entry) => ({ file: path.join(dir, entry.name), version: Number(entry.match![1]) }))
    .sort((a, b) => a.version - b.version);
}
