/** Quoting for the few SQL texts that cannot take bound parameters (file paths, ATTACH aliases). */

export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Placeholders `$from`, `$from+1`, ... for `count` values bound after the first `from - 1`. */
export function placeholders(count: number, from: number): string {
  return Array.from({ length: count }, (_, i) => `$${from + i}`).join(', ');
}
