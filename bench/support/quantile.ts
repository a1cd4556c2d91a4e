/** The nearest-rank quantile `q` (0 < q ≤ 1) of values sorted in ascending order. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
