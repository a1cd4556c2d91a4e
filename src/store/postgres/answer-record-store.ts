import { answerRecordFromRows } from '../row-mapping.js';
import type pg from 'pg';
import type { AnswerRecordStore } from '../api/analytics.js';
import {
  answerRecordForgetItemsStatements,
  answerRecordForgetUsersStatements,
  answerRecordWriteStatements,
} from './answer-record.js';
import type { Statement } from './statement.js';
import { inTransaction, runStatements } from './transaction.js';

/** The rows of items and experiment users held for days from `$1` on. */
const STORED_ITEMS = 'SELECT tenant_id, day, item_id FROM answer_items WHERE day >= $1';
const STORED_USERS =
  'SELECT tenant_id, day, experiment, scenario, user_id FROM experiment_users WHERE day >= $1';

/**
 * The record of answers on PostgreSQL (AnswerRecordStore): each write in a transaction of its own on a
 * connection of the pool, beside the write queue, as DuckDB's writes apart (src/store/duckdb/answer-record.ts).
 * Its statements are answer-record.ts'.
 */
export function pgAnswerRecord(pool: pg.Pool): AnswerRecordStore {
  const apart = async (statements: Statement[]) => {
    if (statements.length === 0) return;
    const client = await pool.connect();
    try {
      await inTransaction(client, () => runStatements(client, statements));
      client.release();
    } catch (error) {
      // A connection that may have broken is closed rather than handed out again.
      client.release(error as Error);
      throw error;
    }
  };
  const select = async (text: string, fromDay: number) =>
    (await pool.query<unknown[]>({ text, values: [fromDay], rowMode: 'array' })).rows;
  return {
    answerRecordRows: async (fromDay) => {
      const items = await select(STORED_ITEMS, fromDay);
      const users = await select(STORED_USERS, fromDay);
      return answerRecordFromRows(items, users);
    },
    answerRecordWrite: (write) => apart(answerRecordWriteStatements(write)),
    answerRecordForgetUsers: (tenantId, userIds) =>
      apart(answerRecordForgetUsersStatements(tenantId, userIds)),
    answerRecordForgetItems: (tenantId, itemIds) =>
      apart(answerRecordForgetItemsStatements(tenantId, itemIds)),
  };
}
