import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MIGRATIONS,
  SCHEMA_VERSION,
  SchemaTooNewError,
  migrate,
  type Migration,
} from '../../../src/store/migrations.js';
import { identityHash } from '../../../src/store/identity-hash.js';

let instance: DuckDBInstance;
let db: DuckDBConnection;

beforeEach(async () => {
  instance = await DuckDBInstance.create(':memory:');
  db = await instance.connect();
});

afterEach(() => {
  db.closeSync();
  instance.closeSync();
});

async function versions(): Promise<number[]> {
  const rows = (await db.runAndReadAll('SELECT version FROM schema_migrations ORDER BY version')).getRowsJS();
  return rows.map((row) => Number(row[0]));
}

describe('migrate', () => {
  it('creates the schema on an empty file and records every version', async () => {
    expect(await migrate(db)).toEqual({ from: 0, to: SCHEMA_VERSION });
    expect(await versions()).toEqual(MIGRATIONS.map((m) => m.version));
    const tables = (
      await db.runAndReadAll('SELECT table_name FROM information_schema.tables ORDER BY 1')
    ).getRowsJS();
    expect(tables.flat()).toEqual(
      expect.arrayContaining([
        'tenants',
        'credentials',
        'items',
        'users',
        'interactions',
        'impressions',
        'config_documents',
        'merge_ledger',
      ]),
    );
  });

  it('is idempotent', async () => {
    await migrate(db);
    expect(await migrate(db)).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
  });

  it('upgrades an older file with the missing migrations only', async () => {
    const later: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'later',
      statements: ['CREATE TABLE extra (a INTEGER)'],
    };
    await migrate(db);
    await db.run(`INSERT INTO tenants VALUES ('kept', 1)`);
    expect(await migrate(db, [...MIGRATIONS, later])).toEqual({
      from: SCHEMA_VERSION,
      to: SCHEMA_VERSION + 1,
    });
    expect(await versions()).toEqual([...MIGRATIONS.map((m) => m.version), SCHEMA_VERSION + 1]);
    expect((await db.runAndReadAll('SELECT tenant_id FROM tenants')).getRowsJS()).toEqual([['kept']]);
  });

  it('rolls a record of single answers up into days (version 6)', async () => {
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 5),
    );
    const day = 20_000 * 86_400_000;
    await db.run(`INSERT INTO answers VALUES
      ('t', 'r1', ${day + 1}, 'u1', 'home', 'popularity', 'exp', '["a","b"]'),
      ('t', 'r2', ${day + 2}, NULL, NULL, 'popularity', NULL, '["b","c"]'),
      ('t', 'r3', ${day + 3}, 'u1', 'home', 'popularity', 'exp', '["a"]')`);
    await migrate(db);
    const rows = async (sql: string) =>
      (await db.runAndReadAll(sql)).getRowsJS().map((row) => row.map(String));
    expect(await rows('SELECT * FROM answer_days ORDER BY ALL')).toEqual([
      ['t', '20000', '', 'popularity', '', '1'],
      ['t', '20000', 'home', 'popularity', 'exp', '2'],
    ]);
    expect(await rows('SELECT item_id FROM answer_items ORDER BY ALL')).toEqual([['a'], ['b'], ['c']]);
    expect(await rows('SELECT * FROM experiment_users')).toEqual([['t', '20000', 'exp', 'home', 'u1']]);
    const left = await rows(`SELECT count(*) FROM information_schema.tables WHERE table_name = 'answers'`);
    expect(left).toEqual([['0']]);
  });

  it('keys the items of stored events and hashes their identities, keeping events and order (version 7)', async () => {
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 6),
    );
    // Sequence numbers out of id order, an impression without items, two tenants.
    await db.run(`INSERT INTO interactions
        (tenant_id, event_id, user_id, session_id, item_id, type, weight, ts, received_at, seq, merged)
      VALUES ('t', 'e1', 'u1', NULL, 'b', 'view', 1, 10, 10, 1, false),
             ('u', 'e2', NULL, 's1', 'a', 'cart', 2, 11, 11, 2, NULL),
             ('t', 'e3', 'u1', 's1', 'a', 'view', 1, 12, 12, 3, true)`);
    await db.run(`INSERT INTO impressions (tenant_id, user_id, item_ids, scenario_slug, ts, received_at, seq)
      VALUES ('t', 'x', ['c', 'a', 'b'], 'home', 20, 20, 1), ('t', 'y', [], NULL, 21, 21, 2),
             ('u', 'z', ['z', 'a'], NULL, 22, 22, 3)`);
    await migrate(db);
    const rows = async (sql: string) => (await db.runAndReadAll(sql)).getRowsJS();
    expect(await rows('SELECT * FROM item_keys ORDER BY ALL')).toEqual([
      ['t', 'a', 0],
      ['t', 'b', 1],
      ['t', 'c', 2],
      ['u', 'a', 0],
      ['u', 'z', 1],
    ]);
    expect(
      await rows(
        'SELECT event_id, item_id, item_key, type, weight, ts, seq, merged, identity_hash FROM interactions',
      ),
    ).toEqual([
      ['e1', 'b', 1, 'view', 1, 10n, 1n, false, identityHash('u1')],
      ['e2', 'a', 0, 'cart', 2, 11n, 2n, null, identityHash('s1')],
      ['e3', 'a', 0, 'view', 1, 12n, 3n, true, identityHash('u1')],
    ]);
    expect(await rows('SELECT user_id, item_ids, item_keys, scenario_slug, seq FROM impressions')).toEqual([
      ['x', ['c', 'a', 'b'], [2, 0, 1], 'home', 1n],
      ['y', [], [], null, 2n],
      ['z', ['z', 'a'], [1, 0], null, 3n],
    ]);
    // The copies kept the tables' constraints and defaults.
    await expect(db.run(`INSERT INTO interactions (tenant_id, item_id) VALUES ('t', 'a')`)).rejects.toThrow(
      /NOT NULL/,
    );
    await db.run(`INSERT INTO interactions (tenant_id, item_id, type, weight, ts, received_at, item_key, identity_hash)
      VALUES ('t', 'a', 'view', 1, 1, 1, 0, 0)`);
    expect(await rows('SELECT merged FROM interactions WHERE seq IS NULL')).toEqual([[false]]);
  });

  it('adds amount, price and profit to stored events, NULL on those stored before (version 9)', async () => {
    await migrate(
      db,
      MIGRATIONS.filter((m) => m.version <= 8),
    );
    await db.run(`INSERT INTO interactions (tenant_id, item_id, type, weight, ts, received_at, item_key, identity_hash)
      VALUES ('t', 'a', 'purchase', 4, 1, 1, 0, 0)`);
    expect(await migrate(db)).toEqual({ from: 8, to: SCHEMA_VERSION });
    const rows = async (sql: string) => (await db.runAndReadAll(sql)).getRowsJS();
    expect(await rows('SELECT item_id, type, amount, price, profit FROM interactions')).toEqual([
      ['a', 'purchase', null, null, null],
    ]);
    // The three come last, in this order: the appender and the log write them there.
    const columns = await rows(
      "SELECT column_name FROM duckdb_columns() WHERE table_name = 'interactions' ORDER BY column_index",
    );
    expect(columns.slice(-3).flat()).toEqual(['amount', 'price', 'profit']);
  });

  it('refuses a file written by a newer binary, with a message that says what to do', async () => {
    await migrate(db);
    await db.run('INSERT INTO schema_migrations VALUES (999, $1, 0)', ['from the future']);
    const error = await migrate(db).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as Error).message).toMatch(/schema version 999.*upgrade nextrec/);
  });

  it('rolls a failed migration back whole', async () => {
    const broken: Migration = {
      version: SCHEMA_VERSION + 1,
      description: 'broken',
      statements: ['CREATE TABLE half (a INTEGER)', 'THIS IS NOT SQL'],
    };
    await migrate(db);
    await expect(migrate(db, [...MIGRATIONS, broken])).rejects.toThrow();
    expect(await versions()).toEqual(MIGRATIONS.map((m) => m.version));
    const half = (
      await db.runAndReadAll(`SELECT count(*) FROM information_schema.tables WHERE table_name = 'half'`)
    ).getRowsJS();
    expect(Number(half[0][0])).toBe(0);
  });
});
