import type { ReadRunner } from './reads.js';
import type { Statement } from './statement.js';

/**
 * Runs `statements` in one transaction on a connection of its own, beside the write queue: for what the
 * daemon records for itself (the record of answers), which needs neither the queue's order nor an answer
 * to a client, and must not hold ingestion back while it is written (each of its writes took the queue
 * for 20 to 75 ms under load). Only for rows no queued write updates: two transactions that change one
 * row conflict. It runs as a read (Store.read): it waits while a scrub runs, and a scrub waits for it; but
 * it needs no log moved first, and moves none (a move of the records log takes DuckDB tens of
 * milliseconds, bench/soak).
 */
export function writeApart(read: ReadRunner, statements: readonly Statement[]): Promise<void> {
  return read(async (db) => {
    await db.run('BEGIN TRANSACTION');
    try {
      for (const statement of statements) await db.run(statement.sql, statement.params);
      await db.run('COMMIT');
    } catch (error) {
      await db.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }, 'none');
}
