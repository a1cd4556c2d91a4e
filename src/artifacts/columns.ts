import { Table, Utf8, makeVector, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { ArtifactError } from './errors.js';

/** One column of an artifact file: numbers as a typed array, or text. */
export type Column = Int32Array | Float32Array | Float64Array | readonly string[];

/**
 * Columns of equal length as an Arrow IPC file: models travel as column blocks that load into typed
 * arrays without an object per row (docs/batch-models.md).
 */
export function columnsToArrow(columns: Record<string, Column>): Uint8Array {
  const vectors = Object.fromEntries(
    Object.entries(columns).map(([name, values]) => [
      name,
      Array.isArray(values) ? vectorFromArray(values, new Utf8()) : makeVector(values as Int32Array),
    ]),
  );
  return tableToIPC(new Table(vectors), 'file');
}

type Kind = 'int32' | 'float32' | 'float64' | 'text';
type Typed<K extends Kind> = K extends 'int32'
  ? Int32Array
  : K extends 'float32'
    ? Float32Array
    : K extends 'float64'
      ? Float64Array
      : string[];

const CONSTRUCTORS = { int32: Int32Array, float32: Float32Array, float64: Float64Array } as const;

/**
 * Where `arrowToColumns` puts a number column: `copy`, out of the file's bytes, so that a column does not
 * keep the whole file alive; `view`, left in them (for columns read once and dropped with the file, as a
 * model's are while it is mapped into dense ids); `shared`, views into a file read into shared memory.
 * Either way a column the file holds in several record batches comes out joined, in a copy of its own
 * (in shared memory for `shared`).
 */
export type Placement = 'copy' | 'view' | 'shared';

/** Reads the named columns of an Arrow IPC file, each checked for its type; the file name is for errors. */
export function arrowToColumns<S extends Record<string, Kind>>(
  bytes: Uint8Array,
  schema: S,
  fileName: string,
  placement: Placement = 'copy',
): { [K in keyof S]: Typed<S[K]> } {
  let table: Table;
  try {
    table = tableFromIPC(bytes);
  } catch (error) {
    throw new ArtifactError(`${fileName} is not an Arrow IPC file (${(error as Error).message})`);
  }
  const result: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(schema)) {
    const child = table.getChild(name);
    if (!child) throw new ArtifactError(`${fileName} has no column '${name}'`);
    const values: unknown = child.toArray();
    if (kind === 'text') {
      if (!Array.isArray(values) || values.some((value) => typeof value !== 'string'))
        throw new ArtifactError(`${fileName}: column '${name}' is not text`);
      result[name] = values;
    } else {
      const Constructor = CONSTRUCTORS[kind];
      if (!(values instanceof Constructor))
        throw new ArtifactError(`${fileName}: column '${name}' is not ${kind}`);
      if (placement === 'shared')
        result[name] = values.buffer === bytes.buffer ? values : sharedMemoryOf(values);
      else if (placement === 'view' || values.byteLength === values.buffer.byteLength) result[name] = values;
      else result[name] = values.slice();
    }
  }
  return result as { [K in keyof S]: Typed<S[K]> };
}

/**
 * A typed array in shared memory, where a message to another thread carries it without copying it
 * (docs/batch-models.md): the array itself when it already spans a whole SharedArrayBuffer (a model's
 * lists are mapped there), else a copy there. Callers only read what it returns.
 */
export function sharedMemoryOf<T extends Int32Array | Float32Array | Float64Array | Uint8Array | Uint16Array>(
  array: T,
): T {
  if (array.buffer instanceof SharedArrayBuffer && array.byteLength === array.buffer.byteLength) return array;
  const Kind = array.constructor as new (buffer: SharedArrayBuffer) => T;
  const copy = new Kind(new SharedArrayBuffer(array.byteLength));
  copy.set(array as never);
  return copy;
}
