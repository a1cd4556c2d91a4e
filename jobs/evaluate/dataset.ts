import type { LakeDb } from '../lake/lake-db.js';
import type { DatasetEvent } from './split.js';

/** Where a dataset file's columns are; unnamed ones are found by their usual names. */
export interface DatasetOptions {
  file: string;
  userColumn?: string;
  itemColumn?: string;
  timeColumn?: string;
  /** A DuckDB SQL condition on the file's columns: rows that fail it are left out. */
  where?: string;
}

const USUAL_NAMES = {
  user: ['user', 'user_id', 'userid', 'customerid', 'customer_id', 'visitorid', 'session_id'],
  item: ['item', 'item_id', 'itemid', 'movieid', 'movie_id', 'stockcode', 'product_id', 'productid', 'sku'],
  time: ['ts', 'timestamp', 'time', 'invoicedate', 'event_time', 'date', 'datetime'],
};

function quoted(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function identifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function pick(columns: string[], given: string | undefined, usual: string[], what: string): string {
  if (given !== undefined) {
    const found = columns.find((column) => column.toLowerCase() === given.toLowerCase());
    if (!found) throw new Error(`the dataset has no column '${given}' (it has ${columns.join(', ')})`);
    return found;
  }
  const found = usual.map((name) => columns.find((column) => column.toLowerCase() === name)).find(Boolean);
  if (!found)
    throw new Error(`no ${what} column found among ${columns.join(', ')}; name it with --${what}-column`);
  return found;
}

/**
 * Reads a CSV or TSV file (gzip allowed) into one event per user and item, the first occurrence, in time
 * order. Times may be dates, or epoch seconds or milliseconds.
 */
export async function readDataset(lake: LakeDb, options: DatasetOptions): Promise<DatasetEvent[]> {
  const { db } = lake;
  await db.run(
    `CREATE OR REPLACE TEMP TABLE raw AS SELECT * FROM read_csv(${quoted(options.file)}, header = true, auto_detect = true)`,
  );
  const described = await db.runAndReadAll('DESCRIBE raw');
  const types = new Map(described.getRows().map((row) => [String(row[0]), String(row[1])]));
  const columns = [...types.keys()];
  const user = pick(columns, options.userColumn, USUAL_NAMES.user, 'user');
  const item = pick(columns, options.itemColumn, USUAL_NAMES.item, 'item');
  const time = pick(columns, options.timeColumn, USUAL_NAMES.time, 'time');
  const type = types.get(time)!;
  const t = identifier(time);
  const millis = /TIMESTAMP|DATE/.test(type)
    ? `epoch_ms(${t}::TIMESTAMP)`
    : `CASE WHEN ${t}::DOUBLE < 1e11 THEN ${t}::DOUBLE * 1000 ELSE ${t}::DOUBLE END`;
  const reader = await db.runAndReadAll(`
    SELECT user_id, item_id, ts FROM (
      SELECT ${identifier(user)}::VARCHAR AS user_id, ${identifier(item)}::VARCHAR AS item_id,
             (${millis})::DOUBLE AS ts, row_number() OVER () AS line
        FROM raw
       WHERE ${identifier(user)} IS NOT NULL AND ${identifier(item)} IS NOT NULL AND ${t} IS NOT NULL
             ${options.where ? `AND (${options.where})` : ''})
    QUALIFY row_number() OVER (PARTITION BY user_id, item_id ORDER BY ts, line) = 1
    ORDER BY ts, line`);
  const [users, items, times] = reader.getColumns();
  return users.map((userId, i) => ({ user: String(userId), item: String(items[i]), ts: Number(times[i]) }));
}
