import { answerRecordFromRows } from '../row-mapping.js';
import { listValue } from '@duckdb/node-api';
import type { AnswerRecordStore, AnswerRecordWrite } from '../api/analytics.js';
import { placeholders } from '../sql.js';
import type { ReadRunner } from './reads.js';
import type { Statement } from './statement.js';
import { writeApart } from './write-apart.js';

/** Rows per INSERT statement. */
const ROWS_PER_STATEMENT = 500;

type Row = readonly (string | number)[];

/** The values of rows as `INSERT`'s VALUES lists of at most ROWS_PER_STATEMENT rows. */
function insertions(prefix: string, suffix: string, rows: readonly Row[]): Statement[] {
  const statements: Statement[] = [];
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const params: (string | number)[] = [];
    const values = rows.slice(start, start + ROWS_PER_STATEMENT).map((row) => {
      const at = params.length;
      params.push(...row);
      return `(${row.map((_, i) => `$${at + i + 1}`).join(', ')})`;
    });
    statements.push({ sql: `${prefix} ${values.join(', ')}${suffix}`, params });
  }
  return statements;
}

/**
 * Rows grouped by their first `width` values, each group's last values as one list. A list binds as one
 * parameter, so a second's new items of a day are one short statement (`unnest`): as rows of VALUES, 500
 * took DuckDB about 25 ms to plan, and a daemon busy ranking felt the write once a second (docs/memory.md).
 */
function grouped(rows: readonly Row[], width: number): [Row, string[]][] {
  const groups = new Map<string, [Row, string[]]>();
  for (const row of rows) {
    const head = row.slice(0, width);
    const key = head.join('\u0000');
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = [head, []]));
    group[1].push(`${row[width]}`);
  }
  return [...groups.values()];
}

/** A group's items new to its day: tenant, day, item ids. */
const INSERT_ITEMS = 'INSERT INTO answer_items SELECT $1, $2, unnest($3::VARCHAR[])';

/** A group's experiment users new to its day: tenant, day, experiment, scenario, user ids. */
const INSERT_USERS = 'INSERT INTO experiment_users SELECT $1, $2, $3, $4, unnest($5::VARCHAR[])';

/** The rows of items and experiment users written for days from `$1` on. */
const STORED_ITEMS = 'SELECT tenant_id, day, item_id FROM answer_items WHERE day >= $1';
const STORED_USERS =
  'SELECT tenant_id, day, experiment, scenario, user_id FROM experiment_users WHERE day >= $1';

/** The record's tables, each with a day (src/store/migrations.ts, version 6). */
const ANSWER_TABLES = ['answer_days', 'answer_items', 'experiment_users'];

/** The statements of one write: each held row as it is (the writer knows the rows already written). */
function writeStatements(write: AnswerRecordWrite): Statement[] {
  const statements = [
    ...insertions(
      'INSERT INTO answer_days VALUES',
      ' ON CONFLICT DO UPDATE SET answers = answers + excluded.answers',
      write.counts,
    ),
    ...grouped(write.items, 2).map(([head, ids]) => ({
      sql: INSERT_ITEMS,
      params: [...head, listValue(ids)],
    })),
    ...grouped(write.users, 4).map(([head, ids]) => ({
      sql: INSERT_USERS,
      params: [...head, listValue(ids)],
    })),
  ];
  if (write.removeBefore !== undefined)
    for (const table of ANSWER_TABLES)
      statements.push({ sql: `DELETE FROM ${table} WHERE day < $1`, params: [write.removeBefore] });
  return statements;
}

/** The record of answers on DuckDB: every write in a transaction beside the write queue (writeApart). */
export function duckDbAnswerRecord(read: ReadRunner): AnswerRecordStore {
  const apart = (statements: Statement[]) =>
    statements.length === 0 ? Promise.resolve() : writeApart(read, statements);
  return {
    answerRecordRows: (fromDay) =>
      read(async (db) => {
        const items = (await db.runAndReadAll(STORED_ITEMS, [fromDay])).getRows();
        const users = (await db.runAndReadAll(STORED_USERS, [fromDay])).getRows();
        return answerRecordFromRows(items, users);
      }),
    answerRecordWrite: (write) => apart(writeStatements(write)),
    answerRecordForgetUsers: (tenantId, userIds) =>
      apart(
        userIds.length === 0
          ? []
          : [
              {
                sql: `DELETE FROM experiment_users WHERE tenant_id = $1 AND user_id IN (${placeholders(userIds.length, 2)})`,
                params: [tenantId, ...userIds],
              },
            ],
      ),
    answerRecordForgetItems: (tenantId, itemIds) =>
      apart(
        itemIds.length === 0
          ? []
          : [
              {
                sql: 'DELETE FROM answer_items WHERE tenant_id = $1 AND item_id IN (SELECT unnest($2::VARCHAR[]))',
                params: [tenantId, listValue([...itemIds])],
              },
            ],
      ),
  };
}
