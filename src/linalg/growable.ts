type TypedArray = Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;
type TypedArrayConstructor<T extends TypedArray> = {
  new (length: number): T;
  new (buffer: SharedArrayBuffer): T;
  readonly BYTES_PER_ELEMENT: number;
};

/** An array of `length` zeros in memory other threads can be handed (docs/memory.md). */
export function sharedArray<T extends TypedArray>(Ctor: TypedArrayConstructor<T>, length: number): T {
  return new Ctor(new SharedArrayBuffer(length * Ctor.BYTES_PER_ELEMENT));
}

/**
 * Returns `array` when it can hold `needed` elements, else a copy with doubled capacity, but no more than
 * `ceiling` elements while `needed` is within it (an array meant to stop there); past it, doubled again.
 */
export function ensureCapacity<T extends TypedArray>(
  array: T,
  needed: number,
  Ctor: TypedArrayConstructor<T>,
  ceiling = Infinity,
): T {
  return growTo(array, needed, (length) => new Ctor(length), ceiling);
}

/** `ensureCapacity` with the copy made by `allocate` (an array over shared memory, say). */
export function growTo<T extends TypedArray>(
  array: T,
  needed: number,
  allocate: (length: number) => T,
  ceiling = Infinity,
): T {
  if (needed <= array.length) return array;
  const doubled = Math.max(needed, array.length * 2, 16);
  const grown = allocate(needed <= ceiling ? Math.min(ceiling, doubled) : doubled);
  grown.set(array);
  return grown;
}
