type TypedArray = Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;
type TypedArrayConstructor<T extends TypedArray> = { new (length: number): T };

/** Returns `array` when it can hold `needed` elements, else a copy with doubled capacity. */
export function ensureCapacity<T extends TypedArray>(
  array: T,
  needed: number,
  Ctor: TypedArrayConstructor<T>,
): T {
  return growTo(array, needed, (length) => new Ctor(length));
}

/** `ensureCapacity` with the copy made by `allocate` (an array over shared memory, say). */
export function growTo<T extends TypedArray>(array: T, needed: number, allocate: (length: number) => T): T {
  if (needed <= array.length) return array;
  const grown = allocate(Math.max(needed, array.length * 2, 16));
  grown.set(array);
  return grown;
}
