import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import path from 'node:path';
import { ArtifactError } from './errors.js';
import {
  MANIFEST_FILE,
  MODEL_NAMES,
  currentVersion,
  modelDir,
  versionName,
  type ModelName,
} from './layout.js';
import { MANIFEST_FORMAT, sha256, type Manifest } from './manifest.js';

/** A version whose manifest reads and whose files match their recorded sizes and checksums. */
export interface VerifiedArtifact {
  manifest: Manifest;
  /** The bytes of one of the manifest's files. */
  file(name: string): Uint8Array;
  /**
   * The bytes of one of the manifest's files, read into shared memory: columns read from them are views
   * a message to another thread carries without a copy.
   */
  sharedFile?(name: string): Uint8Array;
  /**
   * Where one of the manifest's files is, for what reads it in parts or by path (a file of a version
   * opened from its folder; undefined otherwise).
   */
  path?(name: string): string;
}

/**
 * Files larger than this are checked in chunks and read again when asked for, rather than held from
 * the check on: a vectors version's matrix and HNSW indexes are hundreds of MB, which the loader would
 * otherwise hold all at once, and its rows are read from the file as ranking needs them.
 */
const HELD_BYTES = 16 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

/**
 * Calls `each` with the file's bytes in order, a chunk at a time (the same buffer each time): every chunk
 * but the last is CHUNK_BYTES long. Resolves to the file's size.
 */
export function readChunks(file: string, each: (chunk: Uint8Array) => void): number {
  const fd = openSync(file, 'r');
  const buffer = new Uint8Array(CHUNK_BYTES);
  let total = 0;
  try {
    for (;;) {
      let filled = 0;
      while (filled < buffer.byteLength) {
        const read = readSync(fd, buffer, filled, buffer.byteLength - filled, null);
        if (read === 0) break;
        filled += read;
      }
      if (filled > 0) each(buffer.subarray(0, filled));
      total += filled;
      if (filled < buffer.byteLength) return total;
    }
  } finally {
    closeSync(fd);
  }
}

function readManifest(dir: string, model: ModelName, version: number): Manifest {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
  } catch (error) {
    throw new ArtifactError(
      `${MANIFEST_FILE} of ${versionName(version)} cannot be read: ${(error as Error).message}`,
    );
  }
  if (manifest?.format !== MANIFEST_FORMAT)
    throw new ArtifactError(`unknown manifest format ${manifest?.format}`);
  if (manifest.model !== model || !MODEL_NAMES.includes(manifest.model))
    throw new ArtifactError(`manifest is of model '${manifest.model}', not '${model}'`);
  if (manifest.version !== version) throw new ArtifactError(`manifest is of version ${manifest.version}`);
  if (typeof manifest.files !== 'object' || manifest.files === null)
    throw new ArtifactError('manifest lists no files');
  return manifest;
}

/** Opens one version and checks every file against the manifest before anything is loaded from it. */
export function openVersion(
  dataDir: string,
  tenantId: string,
  model: ModelName,
  version: number,
): VerifiedArtifact {
  const dir = path.join(modelDir(dataDir, tenantId, model), versionName(version));
  const manifest = readManifest(dir, model, version);
  if (manifest.tenantId !== tenantId) throw new ArtifactError(`manifest is of tenant '${manifest.tenantId}'`);
  const contents = new Map<string, Uint8Array | undefined>();
  const fileOf = (name: string) => path.join(dir, path.basename(name));
  for (const [name, expected] of Object.entries(manifest.files)) {
    let bytes: Uint8Array | undefined;
    let size: number;
    let digest: string;
    try {
      if (expected.bytes > HELD_BYTES) {
        const hash = createHash('sha256');
        size = readChunks(fileOf(name), (chunk) => hash.update(chunk));
        digest = hash.digest('hex');
      } else {
        bytes = readFileSync(fileOf(name));
        size = bytes.byteLength;
        digest = sha256(bytes);
      }
    } catch (error) {
      throw new ArtifactError(`${name} cannot be read: ${(error as Error).message}`);
    }
    if (size !== expected.bytes)
      throw new ArtifactError(`${name} has ${size} bytes, the manifest says ${expected.bytes}`);
    if (digest !== expected.sha256) throw new ArtifactError(`${name} does not match its checksum`);
    contents.set(name, bytes);
  }
  const listed = (name: string) => {
    if (!contents.has(name)) throw new ArtifactError(`the manifest lists no file ${name}`);
  };
  return {
    manifest,
    file(name) {
      listed(name);
      const held = contents.get(name);
      if (held) return held;
      // Checked above; read again now that it is wanted whole.
      const bytes = readFileSync(fileOf(name));
      if (bytes.byteLength !== manifest.files[name].bytes)
        throw new ArtifactError(`${name} changed since it was checked`);
      return bytes;
    },
    sharedFile(name) {
      listed(name);
      const size = manifest.files[name].bytes;
      const bytes = new Uint8Array(new SharedArrayBuffer(size));
      const held = contents.get(name);
      if (held) bytes.set(held);
      else {
        let at = 0;
        const read = readChunks(fileOf(name), (chunk) => {
          if (at + chunk.byteLength <= size) bytes.set(chunk, at);
          at += chunk.byteLength;
        });
        if (read !== size) throw new ArtifactError(`${name} changed since it was checked`);
      }
      return bytes;
    },
    path(name) {
      listed(name);
      return fileOf(name);
    },
  };
}

/** The version CURRENT names, opened and verified; undefined when the model was never built. */
export function openCurrent(
  dataDir: string,
  tenantId: string,
  model: ModelName,
): VerifiedArtifact | undefined {
  const version = currentVersion(modelDir(dataDir, tenantId, model));
  return version === undefined ? undefined : openVersion(dataDir, tenantId, model, version);
}
