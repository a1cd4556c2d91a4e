import { readFileSync } from 'node:fs';
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
  /** The version's folder: files a library opens by path are read there. */
  dir?: string;
  /** The bytes of one of the manifest's files. */
  file(name: string): Uint8Array;
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
  const contents = new Map<string, Uint8Array>();
  for (const [name, expected] of Object.entries(manifest.files)) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(path.join(dir, path.basename(name)));
    } catch (error) {
      throw new ArtifactError(`${name} cannot be read: ${(error as Error).message}`);
    }
    if (bytes.byteLength !== expected.bytes)
      throw new ArtifactError(`${name} has ${bytes.byteLength} bytes, the manifest says ${expected.bytes}`);
    if (sha256(bytes) !== expected.sha256) throw new ArtifactError(`${name} does not match its checksum`);
    contents.set(name, bytes);
  }
  return {
    manifest,
    dir,
    file(name) {
      const bytes = contents.get(name);
      if (!bytes) throw new ArtifactError(`the manifest lists no file ${name}`);
      return bytes;
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
