type TypedArray = Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;
type TypedArrayConstructor<T extends TypedArray> = { new (length: number): T };

/** Returns `array` when it can hold `needed` elements, else a copy with doubled capacity. */
export function ensureCapacity<T extends TypedArray>(
  array: T,
  needed: number,
  Ctor: TypedArrayConstructor<T>,
): T {
  if (needed <= array.length) return array;
  const grown = new Ctor(Math.max(needed, array.length * 2, 16));
  grown.set(array);
  return grown;
}
