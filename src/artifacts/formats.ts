import { arrowToColumns, columnsToArrow } from './columns.js';
import { ArtifactError } from './errors.js';
import type { VerifiedArtifact } from './open.js';

/**
 * The file formats of models. A job encodes what it built; a loader decodes a verified artifact into
 * typed arrays and checks it (shapes, NaN, id coverage) before anything serves from it. Items and users
 * are named by external id: dense ids exist only inside one process.
 */
export interface ModelFormat<Model> {
  encode(model: Model): { files: Record<string, Uint8Array>; shape: Record<string, number> };
  decode(artifact: VerifiedArtifact): Model;
}

/** Item-item lists: item i's neighbours are neighbours[offsets[i]..offsets[i+1]), best first. */
export interface NeighbourLists {
  items: string[];
  offsets: Int32Array;
  neighbours: Int32Array;
  weights: Float32Array;
}

/** Factor matrices, row-major: row r of `itemFactors` is `items[r]`'s vector of `factors` numbers. */
export interface Factors {
  factors: number;
  items: string[];
  itemFactors: Float32Array;
  users: string[];
  userFactors: Float32Array;
}

function checkIds(ids: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const id of ids) {
    if (id.length === 0) throw new ArtifactError(`an empty ${what} id`);
    if (seen.has(id)) throw new ArtifactError(`${what} '${id}' is listed twice`);
    seen.add(id);
  }
}

function checkFinite(values: Float32Array, what: string): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i]))
      throw new ArtifactError(`${what} has a value that is not a number at ${i}`);
  }
}

function checkShape(artifact: VerifiedArtifact, name: string, actual: number): void {
  const expected = artifact.manifest.shape?.[name];
  if (expected !== actual) throw new ArtifactError(`${name} is ${actual}, the manifest says ${expected}`);
}

export const NEIGHBOUR_LISTS: ModelFormat<NeighbourLists> = {
  encode(model) {
    return {
      files: {
        'items.arrow': columnsToArrow({ external_id: model.items }),
        'offsets.arrow': columnsToArrow({ offset: model.offsets }),
        'neighbours.arrow': columnsToArrow({ neighbour: model.neighbours, weight: model.weights }),
      },
      shape: { items: model.items.length, entries: model.neighbours.length },
    };
  },
  decode(artifact) {
    const { external_id: items } = arrowToColumns(
      artifact.file('items.arrow'),
      { external_id: 'text' },
      'items.arrow',
    );
    const { offset: offsets } = arrowToColumns(
      artifact.file('offsets.arrow'),
      { offset: 'int32' },
      'offsets.arrow',
    );
    const { neighbour: neighbours, weight: weights } = arrowToColumns(
      artifact.file('neighbours.arrow'),
      { neighbour: 'int32', weight: 'float32' },
      'neighbours.arrow',
    );
    checkShape(artifact, 'items', items.length);
    checkShape(artifact, 'entries', neighbours.length);
    checkIds(items, 'item');
    if (offsets.length !== items.length + 1) throw new ArtifactError('offsets do not match the items');
    if (offsets[0] !== 0 || offsets[items.length] !== neighbours.length)
      throw new ArtifactError('offsets do not span the neighbour lists');
    for (let i = 0; i < items.length; i++) {
      if (offsets[i + 1] < offsets[i]) throw new ArtifactError(`offsets decrease at item ${i}`);
    }
    for (let k = 0; k < neighbours.length; k++) {
      if (neighbours[k] < 0 || neighbours[k] >= items.length)
        throw new ArtifactError(`neighbour ${neighbours[k]} at ${k} names no item`);
    }
    checkFinite(weights, 'weight');
    return { items, offsets, neighbours, weights };
  },
};

export const FACTORS: ModelFormat<Factors> = {
  encode(model) {
    return {
      files: {
        'items.arrow': columnsToArrow({ external_id: model.items }),
        'item-factors.arrow': columnsToArrow({ value: model.itemFactors }),
        'users.arrow': columnsToArrow({ external_id: model.users }),
        'user-factors.arrow': columnsToArrow({ value: model.userFactors }),
      },
      shape: { factors: model.factors, items: model.items.length, users: model.users.length },
    };
  },
  decode(artifact) {
    const read = (name: string) =>
      arrowToColumns(artifact.file(name), { external_id: 'text' }, name).external_id;
    const values = (name: string) => arrowToColumns(artifact.file(name), { value: 'float32' }, name).value;
    const items = read('items.arrow');
    const users = read('users.arrow');
    const itemFactors = values('item-factors.arrow');
    const userFactors = values('user-factors.arrow');
    const factors = artifact.manifest.shape?.factors;
    if (!Number.isInteger(factors) || factors < 1) throw new ArtifactError(`factors is ${factors}`);
    checkShape(artifact, 'items', items.length);
    checkShape(artifact, 'users', users.length);
    checkIds(items, 'item');
    checkIds(users, 'user');
    if (itemFactors.length !== items.length * factors)
      throw new ArtifactError('item factors do not match the items');
    if (userFactors.length !== users.length * factors)
      throw new ArtifactError('user factors do not match the users');
    checkFinite(itemFactors, 'item factors');
    checkFinite(userFactors, 'user factors');
    return { factors, items, itemFactors, users, userFactors };
  },
};

/** Each model's file format: the jobs write it, the loader reads it. */
export const MODEL_FORMATS = {
  cooccurrence: NEIGHBOUR_LISTS,
  ease: NEIGHBOUR_LISTS,
  factors: FACTORS,
} as const;
