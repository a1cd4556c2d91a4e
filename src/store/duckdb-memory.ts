import type { DuckDBConnection } from '@duckdb/node-api';

/** DuckDB's own count, read on `db`: `memory` by tag (those above 0, the total first), and what it spilled. */
export async function duckDbMemory(
  db: DuckDBConnection,
): Promise<{ memory: Record<string, number>; temporary: number }> {
  const rows = (
    await db.runAndReadAll(
      'SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory() ORDER BY tag',
    )
  ).getRowsJS();
  const memory: Record<string, number> = { total: 0 };
  let temporary = 0;
  for (const [tag, used, spilled] of rows) {
    const bytes = Number(used);
    memory.total += bytes;
    if (bytes > 0) memory[String(tag)] = bytes;
    temporary += Number(spilled);
  }
  return { memory, temporary };
}
