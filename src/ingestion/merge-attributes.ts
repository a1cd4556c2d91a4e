/** Applies a partial attributes delta: each sent key replaces that key, a null value removes it. */
export function mergeAttributes(
  current: Record<string, unknown> | undefined,
  delta: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...current };
  if (!delta) return merged;
  for (const [key, value] of Object.entries(delta)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return merged;
}
