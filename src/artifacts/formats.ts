import { arrowToColumns, columnsToArrow, sharedMemoryOf } from './columns.js';
import { ArtifactError } from './errors.js';
import { QUANTIZATIONS, type Quantization } from '../contract/vectors.js';
import { readChunks, type VerifiedArtifact } from './open.js';

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
    // Left in the files they were read from: a loader maps them into dense ids and drops them (docs/batch-models.md), so copies of the two largest columns would only be dropped with them.
    const { offset: offsets } = arrowToColumns(
      artifact.file('offsets.arrow'),
      { offset: 'int32' },
      'offsets.arrow',
      'view',
    );
    const { neighbour: neighbours, weight: weights } = arrowToColumns(
      artifact.file('neighbours.arrow'),
      { neighbour: 'int32', weight: 'float32' },
      'neighbours.arrow',
      'view',
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
    // In place, as the neighbour lists: the loader maps them into dense ids and drops them.
    const values = (name: string) =>
      arrowToColumns(artifact.file(name), { value: 'float32' }, name, 'view').value;
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

/**
 * Item vectors: row r of `matrix` (`dimensions` float32 numbers, little-endian) is `items[r]`'s vector,
 * embedded from a text whose hash is `hashes[r]`; `indexFiles` are HNSW indexes over the rows (usearch
 * files, keyed by row), one per quantization, present when the job built them.
 */
export interface ItemVectors {
  model: string;
  dimensions: number;
  items: string[];
  hashes: Uint32Array;
  matrix: Float32Array;
  /** encode: the index files' bytes; decode: their paths. */
  indexes: Partial<Record<Quantization, Uint8Array | string>>;
  /**
   * Each row's nearest rows, best first: row r's are rows[offsets[r]..offsets[r + 1]) with their cosine
   * similarities in `scores`. Absent in versions built without them.
   */
  lists?: { offsets: Int32Array; rows: Int32Array; scores: Float32Array };
  /**
   * decode for serving (`decodeItemVectors(artifact, 'file')`) of a version with HNSW indexes: the file
   * its rows are read from, one at a time, as ranking needs them; `matrix` is then empty. Such a version
   * is never searched exactly, so nothing needs all of its rows in memory.
   */
  matrixFile?: string;
}

const MATRIX_FILE = 'vectors.f32';

function indexFileName(quantization: Quantization): string {
  return `index-${quantization}.usearch`;
}

export const VECTORS: ModelFormat<ItemVectors> = {
  encode(model) {
    const files: Record<string, Uint8Array> = {
      'items.arrow': columnsToArrow({
        external_id: model.items,
        text_hash: new Int32Array(model.hashes.buffer, model.hashes.byteOffset, model.hashes.length),
      }),
      [MATRIX_FILE]: new Uint8Array(model.matrix.buffer, model.matrix.byteOffset, model.matrix.byteLength),
    };
    for (const [quantization, bytes] of Object.entries(model.indexes)) {
      if (bytes instanceof Uint8Array) files[indexFileName(quantization as Quantization)] = bytes;
    }
    if (model.lists) {
      files['list-offsets.arrow'] = columnsToArrow({ offset: model.lists.offsets });
      files['lists.arrow'] = columnsToArrow({ row: model.lists.rows, score: model.lists.scores });
    }
    return { files, shape: { items: model.items.length, dimensions: model.dimensions } };
  },
  decode(artifact) {
    return decodeItemVectors(artifact, 'memory');
  },
};

/**
 * A vectors version, its rows in (shared) memory, or, with `rows: 'file'`, left in their file when the
 * version has HNSW indexes (see ItemVectors.matrixFile); either way every row is checked to be finite.
 */
export function decodeItemVectors(artifact: VerifiedArtifact, rows: 'memory' | 'file'): ItemVectors {
  const { external_id: items, text_hash: hashes } = arrowToColumns(
    artifact.file('items.arrow'),
    { external_id: 'text', text_hash: 'int32' },
    'items.arrow',
  );
  const dimensions = artifact.manifest.shape?.dimensions;
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new ArtifactError(`dimensions is ${dimensions}`);
  checkShape(artifact, 'items', items.length);
  checkIds(items, 'item');
  const matrixBytes = items.length * dimensions * 4;
  const mismatch = () => new ArtifactError('vectors.f32 does not match the items');
  const hnsw = QUANTIZATIONS.some((quantization) => indexFileName(quantization) in artifact.manifest.files);
  let matrix: Float32Array = new Float32Array(0);
  let matrixFile: string | undefined;
  if (rows === 'file' && hnsw && artifact.path) {
    if (artifact.manifest.files[MATRIX_FILE]?.bytes !== matrixBytes) throw mismatch();
    matrixFile = artifact.path(MATRIX_FILE);
    // Whole numbers per chunk: the chunks are a multiple of 4 bytes long and start aligned.
    readChunks(matrixFile, (chunk) =>
      checkFinite(new Float32Array(chunk.buffer, chunk.byteOffset, chunk.byteLength >> 2), 'vectors'),
    );
  } else {
    const bytes = artifact.file(MATRIX_FILE);
    if (bytes.byteLength !== matrixBytes) throw mismatch();
    // In shared memory: the ranking thread searches the same rows without a copy of its own.
    matrix = new Float32Array(new SharedArrayBuffer(bytes.byteLength));
    new Uint8Array(matrix.buffer).set(bytes);
    checkFinite(matrix, 'vectors');
  }
  const indexes: ItemVectors['indexes'] = {};
  for (const quantization of QUANTIZATIONS) {
    const name = indexFileName(quantization);
    if (!(name in artifact.manifest.files)) continue;
    if (artifact.path === undefined) throw new ArtifactError(`${name} has no folder to be opened from`);
    indexes[quantization] = artifact.path(name);
  }
  let lists: ItemVectors['lists'];
  if ('lists.arrow' in artifact.manifest.files) {
    const { offset: offsets } = arrowToColumns(
      artifact.file('list-offsets.arrow'),
      { offset: 'int32' },
      'list-offsets.arrow',
    );
    // Read into shared memory and kept as views there: the lists are the largest part of a version loaded
    // whole (8 bytes a neighbour: 40 MB for 100,000 items), and the file read, its columns copied out of
    // it and those copied into shared memory held them three times over while a version loaded.
    const { row: rows, score: scores } = arrowToColumns(
      artifact.sharedFile?.('lists.arrow') ?? sharedMemoryOf(artifact.file('lists.arrow')),
      { row: 'int32', score: 'float32' },
      'lists.arrow',
      'shared',
    );
    if (offsets.length !== items.length + 1 || offsets[0] !== 0 || offsets[items.length] !== rows.length)
      throw new ArtifactError('list offsets do not span the lists');
    for (let i = 0; i < items.length; i++) {
      if (offsets[i + 1] < offsets[i]) throw new ArtifactError(`list offsets decrease at row ${i}`);
    }
    for (let k = 0; k < rows.length; k++) {
      if (rows[k] < 0 || rows[k] >= items.length) throw new ArtifactError(`list entry ${k} names no row`);
    }
    checkFinite(scores, 'list scores');
    lists = { offsets: sharedMemoryOf(offsets), rows, scores };
  }
  const model = artifact.manifest.parameters.model;
  return {
    lists,
    model: typeof model === 'string' ? model : '',
    dimensions,
    items,
    hashes: new Uint32Array(hashes.buffer, hashes.byteOffset, hashes.length),
    matrix,
    indexes,
    ...(matrixFile !== undefined && { matrixFile }),
  };
}

/** Each model's file format: the jobs write it, the loader reads it. */
export const MODEL_FORMATS = {
  cooccurrence: NEIGHBOUR_LISTS,
  ease: NEIGHBOUR_LISTS,
  factors: FACTORS,
  vectors: VECTORS,
} as const;
