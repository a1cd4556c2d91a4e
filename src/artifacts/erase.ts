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
  const newTargets: number[] = [];
  const newValues: number[] = [];
  for (let row = 0; row < numbers.length; row++) {
    if (numbers[row] < 0) continue;
    for (let k = offsets[row]; k < offsets[row + 1]; k++) {
      const target = numbers[targets[k]];
      if (target < 0) continue;
      newTargets.push(target);
      newValues.push(values[k]);
    }
    newOffsets[numbers[row] + 1] = newTargets.length;
  }
  return { offsets: newOffsets, targets: Int32Array.from(newTargets), values: Float32Array.from(newValues) };
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

/**
 * Whether a version names an erased id and, if so, its model rewritten without them (files and shape):
 * undefined when it names none.
 */
function rewrite(model: ModelName, artifact: VerifiedArtifact, erased: ErasedIds) {
  switch (model) {
    case 'cooccurrence':
    case 'ease': {
      const lists = NEIGHBOUR_LISTS.decode(artifact);
      return names(lists.items, erased.items)
        ? NEIGHBOUR_LISTS.encode(withoutItemsInLists(lists, erased))
        : undefined;
    }
    case 'factors': {
      const factors = FACTORS.decode(artifact);
      return names(factors.items, erased.items) || names(factors.users, erased.users)
        ? FACTORS.encode(withoutIdsInFactors(factors, erased))
        : undefined;
    }
    case 'vectors': {
      const vectors = decodeItemVectors(artifact, 'memory');
      return names(vectors.items, erased.items)
        ? VECTORS.encode(withoutItemsInVectors(vectors, erased))
        : undefined;
    }
  }
}

/**
 * Makes a tenant's kept model versions stop naming deleted items and identities (docs/batch-models.md,
 * "Deleted ids"): an older version that names one is removed; the version CURRENT names is published
 * again without them, as a new version that CURRENT then names, and the old one removed, so that serving
 * goes on from the same model. A version that cannot be read is removed, but the current one, which the
 * loader refused already and the next build replaces.
 */
export function eraseFromArtifacts(dataDir: string, tenantId: string, erased: ErasedIds): ModelErasure[] {
  const done: ModelErasure[] = [];
  for (const model of MODEL_NAMES) {
    const dir = modelDir(dataDir, tenantId, model);
    const current = currentVersion(dir);
    const erasure: ModelErasure = { model, removed: [] };
    const remove = (version: number) => {
      rmSync(path.join(dir, versionName(version)), { recursive: true, force: true });
      erasure.removed.push(version);
    };
    for (const version of versions(dir)) {
      let artifact: VerifiedArtifact;
      let rewritten: ReturnType<typeof rewrite>;
      try {
        artifact = openVersion(dataDir, tenantId, model, version);
        rewritten = rewrite(model, artifact, erased);
      } catch (error) {
        if (!(error instanceof ArtifactError)) throw error;
        if (version !== current) remove(version);
        continue;
      }
      if (rewritten === undefined) continue;
      if (version === current) {
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
