/**
 * IEEE 754 half precision (binary16) for model weights that serving only sums: two bytes a weight
 * instead of four, with 11 significant bits (a relative error below 0.05%), decoded by a table lookup
 * (docs/memory.md).
 */

const floatView = new Float32Array(1);
const bitsView = new Uint32Array(floatView.buffer);

/** The half-precision bits nearest to `value` (ties to even; beyond the range: ±Infinity). */
export function toHalf(value: number): number {
  floatView[0] = value;
  const bits = bitsView[0];
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  // Rebased to half's bias (15 against 127).
  const halfExponent = exponent - 112;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal in half precision, or too small for it (then zero).
    if (halfExponent < -10) return sign;
    const full = mantissa | 0x800000;
    const shift = 14 - halfExponent;
    const half = full >>> shift;
    const rest = full & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    return sign | (half + (rest > midpoint || (rest === midpoint && (half & 1) === 1) ? 1 : 0));
  }
  const half = (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa moves into the exponent, which is the right rounding there too.
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1) === 1) ? 1 : 0));
}

function fromHalf(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Every half-precision value by its bits: `HALF_VALUES[bits]` decodes a weight. */
export const HALF_VALUES: Float32Array = Float32Array.from({ length: 0x10000 }, (_, bits) => fromHalf(bits));

/** The weights in half precision. */
export function toHalves(values: ArrayLike<number>): Uint16Array {
  const halves = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) halves[i] = toHalf(values[i]);
  return halves;
}
