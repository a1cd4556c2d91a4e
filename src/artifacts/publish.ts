import { mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { partialName, removeAbandonedPartials, replaceDurably, writeDurably } from '../durable-files.js';
import {
  CURRENT_FILE,
  MANIFEST_FILE,
  currentVersion,
  modelDir,
  versionName,
  versions,
  type ModelName,
} from './layout.js';
import { MANIFEST_FORMAT, sha256, type Manifest } from './manifest.js';

/** A model as a job built it: its files and what the manifest says of them. */
export interface BuiltModel {
  files: Record<string, Uint8Array>;
  parameters: Record<string, unknown>;
  source: Manifest['source'];
  shape: Manifest['shape'];
  evaluation?: Manifest['evaluation'];
}

/** Versions kept besides the current one, for a rollback by hand and for loaders still reading them. */
export const KEPT_VERSIONS = 3;

/**
 * Writes a new version of a tenant's model and points CURRENT at it: the version's folder is written
 * under a partial name and renamed whole, then CURRENT is replaced by a rename, so a reader sees either
 * the old version or the complete new one. Older versions beyond KEPT_VERSIONS are removed.
 */
export function publishModel(
  dataDir: string,
  tenantId: string,
  model: ModelName,
  built: BuiltModel,
  buildMs: number,
): Manifest {
  const dir = modelDir(dataDir, tenantId, model);
  mkdirSync(dir, { recursive: true });
  removeAbandonedPartials(dir);
  const existing = versions(dir);
  const version = Math.max(Date.now(), (existing.at(-1) ?? 0) + 1);
  const final = path.join(dir, versionName(version));
  const partial = partialName(final);
  mkdirSync(partial);
  try {
    const files: Manifest['files'] = {};
    for (const [name, bytes] of Object.entries(built.files)) {
      writeDurably(path.join(partial, name), bytes);
      files[name] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
    }
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      model,
      version,
      tenantId,
      builtAt: new Date().toISOString(),
      buildMs,
      parameters: built.parameters,
      source: built.source,
      shape: built.shape,
      ...(built.evaluation ? { evaluation: built.evaluation } : {}),
      files,
    };
    writeDurably(path.join(partial, MANIFEST_FILE), JSON.stringify(manifest, null, 2));
    renameSync(partial, final);
    replaceDurably(path.join(dir, CURRENT_FILE), `${versionName(version)}\n`);
    prune(dir);
    return manifest;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/**
 * Adds the figures of an evaluation of a published version to its manifest (replaced by a rename, so a
 * reader sees the old manifest or the new one). The model's files are unchanged.
 */
export function recordEvaluation(
  dataDir: string,
  tenantId: string,
  model: ModelName,
  version: number,
  evaluation: Record<string, number>,
): Manifest {
  const file = path.join(modelDir(dataDir, tenantId, model), versionName(version), MANIFEST_FILE);
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
  const updated: Manifest = { ...manifest, evaluation: { ...manifest.evaluation, ...evaluation } };
  replaceDurably(file, JSON.stringify(updated, null, 2));
  return updated;
}

function prune(dir: string): void {
  const current = currentVersion(dir);
  const old = versions(dir).filter((version) => version !== current);
  for (const version of old.slice(0, Math.max(0, old.length - KEPT_VERSIONS)))
    rmSync(path.join(dir, versionName(version)), { recursive: true, force: true });
}
