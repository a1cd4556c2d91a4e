import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Where models live: `<data-dir>/artifacts/<tenant>/<model>/<version>/` holds one built model (its files
 * and `manifest.json`), and `<data-dir>/artifacts/<tenant>/<model>/CURRENT` names the version to serve
 * (docs/batch-models.md).
 */
export const MODEL_NAMES = ['cooccurrence', 'ease', 'factors', 'vectors'] as const;
export type ModelName = (typeof MODEL_NAMES)[number];
/**
 * The models whose jobs read the lake's catalog (items, users, the vectors' configuration), not its events
 * alone: the export before their build writes the catalog too (docs/batch-models.md, "The lake").
 */
export const CATALOG_MODELS: ReadonlySet<ModelName> = new Set<ModelName>(['vectors']);

export const ARTIFACTS_DIR = 'artifacts';
export const CURRENT_FILE = 'CURRENT';
export const MANIFEST_FILE = 'manifest.json';
const VERSION = /^v(\d{16})$/;

export function modelDir(dataDir: string, tenantId: string, model: ModelName): string {
  return path.join(dataDir, ARTIFACTS_DIR, tenantId, model);
}

export function versionName(version: number): string {
  return `v${String(version).padStart(16, '0')}`;
}

export function parseVersion(name: string): number | undefined {
  const match = VERSION.exec(name.trim());
  return match ? Number(match[1]) : undefined;
}

/** The versions present in a model's folder, oldest first (partial ones are not versions). */
export function versions(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map(parseVersion)
    .filter((version): version is number => version !== undefined)
    .sort((a, b) => a - b);
}

/** The version CURRENT names, or undefined when there is none (or it names no version). */
export function currentVersion(dir: string): number | undefined {
  try {
    return parseVersion(readFileSync(path.join(dir, CURRENT_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * `currentVersion` off the event loop: the daemon's loader reads every tenant's pointers each second, and
 * read one after another on the event loop, 100 tenants' took milliseconds at a time from the requests.
 */
export async function readCurrentVersion(dir: string): Promise<number | undefined> {
  try {
    return parseVersion(await readFile(path.join(dir, CURRENT_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}
