/** A command-line flag's value as a positive integer, or a clear error naming the flag. */
export function positiveInteger(flag: string, value: unknown): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1) throw new Error(`${flag} must be a positive integer`);
  return number;
}
