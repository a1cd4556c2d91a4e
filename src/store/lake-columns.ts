import type { DuckDBConnection } from '@duckdb/node-api';
import type { EventTable, SnapshotTable } from '../lake/layout.js';
import { REVENUE_COLUMNS } from './row-mapping.js';
import { sqlString } from './sql.js';

/** The DuckDB types of the lake's columns. */
export type LakeColumnType = 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'VARCHAR' | 'VARCHAR[]';

/** A column of a lake table: both stores write it under this name, with this type. */
export interface LakeColumn {
  name: string;
  type: LakeColumnType;
  /** A JSON document in the store, exported as the text it was written as. */
  json?: boolean;
}

const column = (name: string, type: LakeColumnType): LakeColumn => ({ name, type });
const text = (name: string): LakeColumn => column(name, 'VARCHAR');
const bigint = (name: string): LakeColumn => column(name, 'BIGINT');
const json = (name: string): LakeColumn => ({ name, type: 'VARCHAR', json: true });

/**
 * The columns each table exports, in order (the tenant is the folder; docs/batch-models.md, "The lake").
 * Both stores write exactly these: the DuckDB store copies them from its tables, the PostgreSQL store
 * appends its rows to a table of these types in an in-memory DuckDB.
 */
export const LAKE_COLUMNS: Record<EventTable | SnapshotTable, readonly LakeColumn[]> = {
  interactions: [
    bigint('seq'),
    ...['event_id', 'user_id', 'session_id', 'item_id', 'type'].map(text),
    column('weight', 'DOUBLE'),
    text('scenario_slug'),
    text('country'),
    bigint('ts'),
    bigint('received_at'),
    ...REVENUE_COLUMNS.map((name) => column(name, 'DOUBLE')),
  ],
  impressions: [
    bigint('seq'),
    text('event_id'),
    text('user_id'),
    column('item_ids', 'VARCHAR[]'),
    ...['scenario_slug', 'country', 'recomm_id'].map(text),
    bigint('ts'),
    bigint('received_at'),
  ],
  items: [
    text('external_id'),
    text('category'),
    json('attributes'),
    text('expires_at'),
    column('available', 'BOOLEAN'),
    column('feed_managed', 'BOOLEAN'),
    bigint('created_at'),
    bigint('updated_at'),
  ],
  users: [text('external_id'), json('attributes'), bigint('created_at'), bigint('updated_at')],
};

/** A table's columns as a select list, each JSON column cast to the store's text type (`VARCHAR`, `text`). */
export function lakeSelectList(table: EventTable | SnapshotTable, textType: string): string {
  return LAKE_COLUMNS[table]
    .map(({ name, json }) => (json ? `${name}::${textType} AS ${name}` : name))
    .join(', ');
}

/** Writes a query's rows to `file` as Parquet, as every file of the lake is written. */
export async function copyToParquet(db: DuckDBConnection, query: string, file: string): Promise<void> {
  await db.run(`COPY (${query}) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd)`);
}
