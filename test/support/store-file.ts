import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

/** Reads the store file of a stopped daemon directly, to check what was made durable. */
export async function queryStore(dataDir: string, sql: string, params: (string | number)[] = []) {
  const instance = await DuckDBInstance.create(path.join(dataDir, 'nextrec.duckdb'));
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql, params)).getRowObjectsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
