import { rmSync } from 'node:fs';
import path from 'node:path';
import { ArtifactError } from './errors.js';
import {
  FACTORS,
  NEIGHBOUR_LISTS,
  VECTORS,
  decodeItemVectors,
  type Factors,
  type ItemVectors,
  type NeighbourLists,
} from './formats.js';
import { MODEL_NAMES, currentVersion, modelDir, versionName, versions, type ModelName } from './layout.js';
import { openVersion, type VerifiedArtifact } from './open.js';
import { publishModel, type BuiltModel } from './publish.js';

/** Deleted ids that no kept version of a model may name any more. */
export interface ErasedIds {
  items?: ReadonlySet<string>;
  /** Identities: user and session ids. */
  users?: ReadonlySet<string>;
}

/** What one model's versions became: versions removed, and the serving one rewritten (its new version). */
export interface ModelErasure {
  model: ModelName;
  removed: number[];
  rewritten?: { from: number; to: number };
}

function names(ids: readonly string[], erased: ReadonlySet<string> | undefined): boolean {
  return erased !== undefined && erased.size > 0 && ids.some((id) => erased.has(id));
}

/** Each kept row's new number (-1: dropped) and how many are kept. */
function renumbering(ids: readonly string[], erased: ReadonlySet<string> | undefined) {
  const numbers = new Int32Array(ids.length).fill(-1);
  let kept = 0;
  ids.forEach((id, row) => {
    if (!erased?.has(id)) numbers[row] = kept++;
  });
  return { numbers, kept };
}

/** Lists (row r's entries are targets[offsets[r]..offsets[r + 1])) without the dropped rows, renumbered. */
function keptLists(
  offsets: Int32Array,
  targets: Int32Array,
  values: Float32Array,
  numbers: Int32Array,
  kept: number,
): { offsets: Int32Array; targets: Int32Array; values: Float32Array } {
  const newOffsets = new Int32Array(kept + 1);
  let entries = 0;
  for (let row = 0; row < numbers.length; row++) {
    if (numbers[row] < 0) continue;
    for (let k = offsets[row]; k < offsets[row + 1]; k++) if (numbers[targets[k]] >= 0) entries++;
  }
  const newTargets = new Int32Array(entries);
  const newValues = new Float32Array(entries);
  let next = 0;
  for (let row = 0; row < numbers.length; row++) {
    if (numbers[row] < 0) continue;
    for (let k = offsets[row]; k < offsets[row + 1]; k++) {
      const target = numbers[targets[k]];
      if (target < 0) continue;
      newTargets[next] = target;
      newValues[next++] = values[k];
    }
    newOffsets[numbers[row] + 1] = next;
  }
  return { offsets: newOffsets, targets: newTargets, values: newValues };
}

/** Rows of `width` numbers of `matrix` that `numbers` keeps, in order. */
function keptRows(matrix: Float32Array, width: number, numbers: Int32Array, kept: number): Float32Array {
  const result = new Float32Array(kept * width);
  for (let row = 0; row < numbers.length; row++) {
    if (numbers[row] >= 0)
      result.set(matrix.subarray(row * width, row * width + width), numbers[row] * width);
  }
  return result;
}

function withoutItemsInLists(model: NeighbourLists, erased: ErasedIds): NeighbourLists {
  const { numbers, kept } = renumbering(model.items, erased.items);
  const lists = keptLists(model.offsets, model.neighbours, model.weights, numbers, kept);
  return {
    items: model.items.filter((_, row) => numbers[row] >= 0),
    offsets: lists.offsets,
    neighbours: lists.targets,
    weights: lists.values,
  };
}

function withoutIdsInFactors(model: Factors, erased: ErasedIds): Factors {
  const items = renumbering(model.items, erased.items);
  const users = renumbering(model.users, erased.users);
  return {
    factors: model.factors,
    items: model.items.filter((_, row) => items.numbers[row] >= 0),
    itemFactors: keptRows(model.itemFactors, model.factors, items.numbers, items.kept),
    users: model.users.filter((_, row) => users.numbers[row] >= 0),
    userFactors: keptRows(model.userFactors, model.factors, users.numbers, users.kept),
  };
}

/**
 * Vectors without the erased items. The HNSW indexes are keyed by row and cannot lose rows: the
 * rewritten version has none, and is searched exactly until the next vectors build.
 */
function withoutItemsInVectors(model: ItemVectors, erased: ErasedIds): ItemVectors {
  const { numbers, kept } = renumbering(model.items, erased.items);
  const lists =
    model.lists && keptLists(model.lists.offsets, model.lists.rows, model.lists.scores, numbers, kept);
  return {
    model: model.model,
    dimensions: model.dimensions,
    items: model.items.filter((_, row) => numbers[row] >= 0),
    hashes: model.hashes.filter((_, row) => numbers[row] >= 0),
    matrix: keptRows(model.matrix, model.dimensions, numbers, kept),
    indexes: {},
    ...(lists && { lists: { offsets: lists.offsets, rows: lists.targets, scores: lists.values } }),
  };
}

function any(erased: ReadonlySet<string> | undefined): boolean {
  return erased !== undefined && erased.size > 0;
}

/** Whether a model can name any of the erased ids: only factors hold users. */
function concerns(model: ModelName, erased: ErasedIds): boolean {
  return any(erased.items) || (model === 'factors' && any(erased.users));
}

/** A version's model decoded: what it names and, on demand, itself rewritten without the erased ids. */
function decoded(model: ModelName, artifact: VerifiedArtifact, erased: ErasedIds) {
  switch (model) {
    case 'cooccurrence':
    case 'ease': {
      const lists = NEIGHBOUR_LISTS.decode(artifact);
      return {
        names: names(lists.items, erased.items),
        rewrite: () => NEIGHBOUR_LISTS.encode(withoutItemsInLists(lists, erased)),
      };
    }
    case 'factors': {
      const factors = FACTORS.decode(artifact);
      return {
        names: names(factors.items, erased.items) || names(factors.users, erased.users),
        rewrite: () => FACTORS.encode(withoutIdsInFactors(factors, erased)),
      };
    }
    case 'vectors': {
      const vectors = decodeItemVectors(artifact, 'memory');
      return {
        names: names(vectors.items, erased.items),
        rewrite: () => VECTORS.encode(withoutItemsInVectors(vectors, erased)),
      };
    }
  }
}

/**
 * Makes a tenant's kept model versions stop naming deleted items and identities (docs/batch-models.md,
 * "Deleted ids"): an older version that names one is removed; the version CURRENT names is published
 * again without them, as a new version that CURRENT then names, and the old one removed, so that serving
 * goes on from the same model. A version that cannot be read is removed, but the current one, which the
 * loader refused already and the next build replaces. A model that cannot hold the ids erased (only
 * factors hold users) is not opened.
 */
export function eraseFromArtifacts(dataDir: string, tenantId: string, erased: ErasedIds): ModelErasure[] {
  const done: ModelErasure[] = [];
  for (const model of MODEL_NAMES) {
    if (!concerns(model, erased)) continue;
    const dir = modelDir(dataDir, tenantId, model);
    const current = currentVersion(dir);
    const erasure: ModelErasure = { model, removed: [] };
    const remove = (version: number) => {
      rmSync(path.join(dir, versionName(version)), { recursive: true, force: true });
      erasure.removed.push(version);
    };
    for (const version of versions(dir)) {
      let artifact: VerifiedArtifact;
      let rewritten: ReturnType<ReturnType<typeof decoded>['rewrite']> | undefined;
      try {
        artifact = openVersion(dataDir, tenantId, model, version);
        const read = decoded(model, artifact, erased);
        if (!read.names) continue;
        // Only the current version is published again: the older ones naming an id are removed.
        if (version === current) rewritten = read.rewrite();
      } catch (error) {
        if (!(error instanceof ArtifactError)) throw error;
        if (version !== current) remove(version);
        continue;
      }
      if (rewritten !== undefined) {
        const { manifest } = artifact;
        const built: BuiltModel = {
          files: rewritten.files,
          parameters: manifest.parameters,
          source: manifest.source,
          shape: rewritten.shape,
          ...(manifest.evaluation && { evaluation: manifest.evaluation }),
        };
        const published = publishModel(dataDir, tenantId, model, built, manifest.buildMs);
        erasure.rewritten = { from: version, to: published.version };
      }
      remove(version);
    }
    if (erasure.removed.length > 0) done.push(erasure);
  }
  return done;
}
