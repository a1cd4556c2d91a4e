/**
 * Inner products of float32 rows, shared by the vectors job (its neighbour lists) and vector search (its
 * rescoring of quantized candidates).
 */

/** The inner product of `length` values of `a` from `aFrom` and of `b` from `bFrom`. */
export function dotAt(
  a: Float32Array,
  aFrom: number,
  b: Float32Array,
  bFrom: number,
  length: number,
): number {
  let sum = 0;
  for (let d = 0; d < length; d++) sum += a[aFrom + d] * b[bFrom + d];
  return sum;
}
