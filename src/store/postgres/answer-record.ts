import type { AnswerRecordWrite } from '../api/analytics.js';
import type { Statement } from './statement.js';

/** Columns of rows, each as one array (a row's i-th value in the i-th array), for `unnest`. */
function columns(rows: readonly (readonly (string | number)[])[], width: number): (string | number)[][] {
  const arrays = Array.from({ length: width }, () => [] as (string | number)[]);
  for (const row of rows) for (let i = 0; i < width; i++) arrays[i].push(row[i]);
  return arrays;
}

/** The record's tables, each with a day (migrations.ts). */
const ANSWER_TABLES = ['answer_days', 'answer_items', 'experiment_users'];

/**
 * The statements of one write of the record of answers (AnswerRecordStore.answerRecordWrite), one per
 * table whatever the rows. Counts add to the day's (counts of one key in one write are summed first: an
 * upsert may not touch a row twice). Items and users already held, recorded by this daemon or by another,
 * are kept once.
 */
export function answerRecordWriteStatements(write: AnswerRecordWrite): Statement[] {
  const statements: Statement[] = [];
  if (write.counts.length > 0)
    statements.push({
      text: `INSERT INTO answer_days
             SELECT tenant_id, day, scenario, algorithm, experiment, sum(answers)
               FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::bigint[])
                    AS c(tenant_id, day, scenario, algorithm, experiment, answers)
              GROUP BY tenant_id, day, scenario, algorithm, experiment
             ON CONFLICT (tenant_id, day, scenario, algorithm, experiment)
             DO UPDATE SET answers = answer_days.answers + excluded.answers`,
      values: columns(write.counts, 6),
    });
  if (write.items.length > 0)
    statements.push({
      text: `INSERT INTO answer_items SELECT * FROM unnest($1::text[], $2::integer[], $3::text[])
             ON CONFLICT DO NOTHING`,
      values: columns(write.items, 3),
    });
  if (write.users.length > 0)
    statements.push({
      text: `INSERT INTO experiment_users
             SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[])
             ON CONFLICT DO NOTHING`,
      values: columns(write.users, 5),
    });
  if (write.removeBefore !== undefined)
    for (const table of ANSWER_TABLES)
      statements.push({ text: `DELETE FROM ${table} WHERE day < $1`, values: [write.removeBefore] });
  return statements;
}

/** Removes deleted users' rows of the record (AnswerRecordStore.answerRecordForgetUsers). */
export function answerRecordForgetUsersStatements(tenantId: string, userIds: readonly string[]): Statement[] {
  if (userIds.length === 0) return [];
  return [
    {
      text: 'DELETE FROM experiment_users WHERE tenant_id = $1 AND user_id = ANY($2)',
      values: [tenantId, [...userIds]],
    },
  ];
}

/** Removes deleted items' rows of the record (AnswerRecordStore.answerRecordForgetItems). */
export function answerRecordForgetItemsStatements(tenantId: string, itemIds: readonly string[]): Statement[] {
  if (itemIds.length === 0) return [];
  return [
    {
      text: 'DELETE FROM answer_items WHERE tenant_id = $1 AND item_id = ANY($2)',
      values: [tenantId, [...itemIds]],
    },
  ];
}
