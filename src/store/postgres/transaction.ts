import type pg from 'pg';
import type { Statement } from './statement.js';

/** Runs `work` in one transaction on `client`: committed if it resolves, rolled back if it throws. */
export async function inTransaction<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  let result: T;
  try {
    result = await work();
  } catch (error) {
    // A connection that broke has no transaction left to roll back: the error that broke it counts.
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  await client.query('COMMIT');
  return result;
}

/** Runs the statements in order, in the transaction open on `client`. */
export async function runStatements(client: pg.ClientBase, statements: readonly Statement[]): Promise<void> {
  for (const statement of statements) await client.query(statement);
}
