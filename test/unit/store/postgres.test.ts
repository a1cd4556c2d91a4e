import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deleteConfigDocument, saveConfigDocument } from '../../../src/store/api/config.js';
import { forgetIdentities, recordMerge } from '../../../src/store/api/identity.js';
import type { StoreOp } from '../../../src/store/api/ops.js';
import { identityHash } from '../../../src/store/identity-hash.js';
import { migrate } from '../../../src/store/migrations.js';
import {
  answerRecordForgetItemsStatements,
  answerRecordForgetUsersStatements,
  answerRecordWriteStatements,
} from '../../../src/store/postgres/answer-record.js';
import { removeItems } from '../../../src/store/postgres/catalog.js';
import { changeLogStatement } from '../../../src/store/postgres/change-log.js';
import { writeFlush } from '../../../src/store/postgres/flush.js';
import {
  POSTGRES_MIGRATIONS,
  POSTGRES_SCHEMA_VERSION,
  PostgresSchemaTooNewError,
  migratePostgres,
} from '../../../src/store/postgres/migrations.js';
import { inTransaction, runStatements } from '../../../src/store/postgres/transaction.js';
import {
  RowBuffer,
  rowKey,
  type StoredImpression,
  type StoredItem,
  type StoredUser,
} from '../../../src/store/rows.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';
import { storedInteraction } from '../../support/temp-store.js';

let server: TestPostgres;
/** Clients connected in a test file, ended after it. */
const clients: pg.Client[] = [];
let databases = 0;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

/** A client of a new, empty database of the cluster. */
async function emptyDatabase(): Promise<{ url: string; client: pg.Client }> {
  const name = `empty_${++databases}`;
  const admin = await connect(server.url);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = server.url.replace(/[^/]+$/, name);
  return { url, client: await connect(url) };
}

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  for (const client of clients) await client.end().catch(() => undefined);
  await server?.stop();
});

async function selectRows(client: pg.ClientBase, text: string, values: unknown[] = []): Promise<unknown[][]> {
  return (await client.query({ text, values, rowMode: 'array' })).rows as unknown[][];
}

describe('migratePostgres', () => {
  it('creates the schema on an empty database, records every version, and does nothing the second time', async () => {
    const { client } = await emptyDatabase();
    expect(await migratePostgres(client)).toEqual({ from: 0, to: POSTGRES_SCHEMA_VERSION });
    expect(await selectRows(client, 'SELECT version FROM schema_migrations ORDER BY version')).toEqual(
      POSTGRES_MIGRATIONS.map((migration) => [migration.version]),
    );
    expect(await migratePostgres(client)).toEqual({
      from: POSTGRES_SCHEMA_VERSION,
      to: POSTGRES_SCHEMA_VERSION,
    });
    expect(await selectRows(client, 'SELECT count(*)::int FROM schema_migrations')).toEqual([
      [POSTGRES_MIGRATIONS.length],
    ]);
  });

  it("has DuckDB's tables with their columns in DuckDB's order, and the change log", async () => {
    const { client } = await emptyDatabase();
    await migratePostgres(client);
    const columns = async (query: (text: string) => Promise<unknown[][]>) => {
      const found = new Map<string, string[]>();
      for (const [table, column] of await query(
        `SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema IN ('main', 'public') ORDER BY table_name, ordinal_position`,
      ))
        found.set(String(table), [...(found.get(String(table)) ?? []), String(column)]);
      return found;
    };
    const instance = await DuckDBInstance.create(':memory:');
    const duck = await instance.connect();
    try {
      await migrate(duck);
      const duckDb = await columns(async (text) => (await duck.runAndReadAll(text)).getRowsJS());
      const postgres = await columns((text) => selectRows(client, text));
      // The local logs' marks have no counterpart on PostgreSQL (src/store/postgres/migrations.ts).
      duckDb.delete('log_marks');
      expect(Object.fromEntries(postgres)).toEqual({
        ...Object.fromEntries(duckDb),
        change_counters: ['tenant_id', 'seq'],
        change_log: ['tenant_id', 'seq', 'kind', 'payload'],
        event_counters: ['tenant_id', 'interactions', 'impressions', 'item_keys'],
        // DuckDB's store is one process's: the artifacts' pointers are its record of versions.
        model_versions: ['tenant_id', 'model', 'version', 'published_at'],
      });
    } finally {
      duck.closeSync();
      instance.closeSync();
    }
  });

  it('lets daemons that start together migrate once', async () => {
    const { url, client } = await emptyDatabase();
    const other = await connect(url);
    const results = await Promise.all([migratePostgres(client), migratePostgres(other)]);
    expect(results).toEqual(
      expect.arrayContaining([
        { from: 0, to: POSTGRES_SCHEMA_VERSION },
        { from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION },
      ]),
    );
    expect(await selectRows(client, 'SELECT count(*)::int FROM schema_migrations')).toEqual([
      [POSTGRES_MIGRATIONS.length],
    ]);
  });

  it('refuses a database of a newer nextrec', async () => {
    const { client } = await emptyDatabase();
    await migratePostgres(client);
    await client.query("INSERT INTO schema_migrations VALUES (99, 'newer', 0)");
    await expect(migratePostgres(client)).rejects.toBeInstanceOf(PostgresSchemaTooNewError);
  });
});

/** The tables the flushes below write, emptied before each test. */
const TABLES = [
  'tenants',
  'credentials',
  'items',
  'users',
  'interactions',
  'impressions',
  'config_documents',
  'merge_ledger',
  'answer_days',
  'answer_items',
  'experiment_users',
  'item_keys',
  'change_counters',
  'change_log',
  'event_counters',
];

describe('a PostgreSQL store', () => {
  let db: pg.Client;
  let url: string;

  beforeAll(async () => {
    ({ client: db, url } = await emptyDatabase());
    await migratePostgres(db);
  });

  beforeEach(async () => {
    await db.query(`TRUNCATE ${TABLES.join(', ')}`);
  });

  function item(externalId: string, fields: Partial<StoredItem> = {}): StoredItem {
    return {
      externalId,
      category: null,
      attributes: {},
      expiresAt: null,
      available: true,
      feedManaged: false,
      createdAt: 1,
      updatedAt: 1,
      ...fields,
    };
  }

  function user(externalId: string, attributes: Record<string, unknown> = {}): StoredUser {
    return { externalId, attributes, createdAt: 2, updatedAt: 3 };
  }

  function impression(eventId: string | null, itemIds: string[]): StoredImpression {
    return {
      eventId,
      userId: 'u1',
      itemIds,
      scenarioSlug: 'home',
      country: null,
      recommId: 'r1',
      ts: 5,
      receivedAt: 6,
    };
  }

  function buffer(fill: (rows: RowBuffer) => void): RowBuffer {
    const rows = new RowBuffer();
    fill(rows);
    return rows;
  }

  function upsert(rows: RowBuffer, tenantId: string, stored: StoredItem): void {
    rows.items.set(rowKey(tenantId, stored.externalId), [tenantId, stored]);
  }

  it('writes a flush of items, users, events and operations of every kind in one transaction', async () => {
    const ops: StoreOp[] = [
      { area: 'tenants', op: 'create', tenantId: 't', createdAt: 10 },
      {
        area: 'tenants',
        op: 'saveCredential',
        tenantId: 't',
        kind: 'api',
        secretHash: 'h1',
        salt: 's1',
        updatedAt: 11,
      },
      {
        area: 'tenants',
        op: 'saveCredential',
        tenantId: 't',
        kind: 'api',
        secretHash: 'h2',
        salt: 's2',
        updatedAt: 12,
      },
      saveConfigDocument('t', 'scenario', 'home', { name: 'home', rules: [{ z: 1, a: 2 }] }),
      saveConfigDocument('t', 'scenario', 'gone', { name: 'gone' }),
      deleteConfigDocument('t', 'scenario', 'gone'),
      recordMerge('t', 'u1', 's1', 2, 13),
      recordMerge('t', 'u1', 's1', 3, 14),
    ];
    const rows = buffer((rows) => {
      upsert(rows, 't', item('i1', { category: 'shoes', attributes: { size: 42, brand: 'é"\\' } }));
      upsert(rows, 'other', item('i1', { available: false, feedManaged: true, expiresAt: '2030-01-01' }));
      rows.users.set(rowKey('t', 'u1'), ['t', user('u1', { zeta: 1, alpha: [true, null] })]);
      rows.interactions.push(
        ['t', storedInteraction('e1', { itemId: 'i1' })],
        [
          't',
          storedInteraction('', { eventId: null, userId: null, sessionId: 's1', itemId: 'i2', weight: 0.5 }),
        ],
        [
          't',
          storedInteraction('e2', {
            itemId: 'i1',
            type: 'purchase',
            merged: true,
            recommId: 'r1',
            amount: 2,
            price: 19.5,
            profit: 4.25,
          }),
        ],
        ['t', storedInteraction('e1', { itemId: 'i3' })],
      );
      rows.impressions.push(['t', impression('m1', ['i3', 'i"{,}', 'i1'])], ['t', impression(null, [])]);
      rows.ops.push(...ops);
    });
    expect(await writeFlush(db, rows)).toEqual({ skippedInteractions: 1, skippedImpressions: 0 });

    expect(
      await select(
        `SELECT tenant_id, external_id, category, attributes::text, expires_at, available, feed_managed,
                created_at::int, updated_at::int FROM items ORDER BY tenant_id, external_id`,
      ),
    ).toEqual([
      ['other', 'i1', null, '{}', '2030-01-01', false, true, 1, 1],
      ['t', 'i1', 'shoes', '{"size":42,"brand":"é\\"\\\\"}', null, true, false, 1, 1],
    ]);
    // JSON documents come back as they were written, keys in their order.
    expect(
      await select('SELECT tenant_id, external_id, attributes::text, created_at::int FROM users'),
    ).toEqual([['t', 'u1', '{"zeta":1,"alpha":[true,null]}', 2]]);
    // The second 'e1' of the flush is left out; seq numbers follow the flush's order (its number unused).
    expect(
      await select(
        `SELECT event_id, user_id, session_id, item_id, type, weight, ts::int, received_at::int, seq::int, merged,
                recomm_id, item_key, identity_hash::text, amount, price, profit
           FROM interactions ORDER BY seq`,
      ),
    ).toEqual([
      [
        'e1',
        'u',
        null,
        'i1',
        'view',
        1,
        1,
        1,
        1,
        false,
        null,
        0,
        identityHash('u').toString(),
        null,
        null,
        null,
      ],
      [
        null,
        null,
        's1',
        'i2',
        'view',
        0.5,
        1,
        1,
        2,
        false,
        null,
        1,
        identityHash('s1').toString(),
        null,
        null,
        null,
      ],
      [
        'e2',
        'u',
        null,
        'i1',
        'purchase',
        1,
        1,
        1,
        3,
        true,
        'r1',
        0,
        identityHash('u').toString(),
        2,
        19.5,
        4.25,
      ],
    ]);
    // The tenant's counters: the last seq of each table, and the keys given.
    expect(
      await select('SELECT tenant_id, interactions::int, impressions::int, item_keys FROM event_counters'),
    ).toEqual([['t', 4, 2, 4]]);
    expect(
      await select(
        `SELECT event_id, user_id, item_ids, scenario_slug, recomm_id, ts::int, received_at::int, seq::int, item_keys
           FROM impressions ORDER BY seq`,
      ),
    ).toEqual([
      ['m1', 'u1', ['i3', 'i"{,}', 'i1'], 'home', 'r1', 5, 6, 1, [2, 3, 0]],
      [null, 'u1', [], 'home', 'r1', 5, 6, 2, []],
    ]);
    // Every key given is stored with the events, and is committed.
    expect(await select('SELECT item_id, item_key FROM item_keys ORDER BY item_key')).toEqual([
      ['i1', 0],
      ['i2', 1],
      ['i3', 2],
      ['i"{,}', 3],
    ]);
    expect(await select('SELECT tenant_id, created_at::int FROM tenants')).toEqual([['t', 10]]);
    expect(await select('SELECT kind, secret_hash, salt, created_at::int FROM credentials')).toEqual([
      ['api', 'h2', 's2', 12],
    ]);
    expect(await select('SELECT kind, key, doc::text FROM config_documents')).toEqual([
      ['scenario', 'home', '{"name":"home","rules":[{"z":1,"a":2}]}'],
    ]);
    expect(
      await select('SELECT user_id, session_id, events_copied, merged_at::int FROM merge_ledger'),
    ).toEqual([['u1', 's1', 3, 14]]);
  });

  it("leaves out an event whose id the tenant's table holds from an earlier flush, of this daemon or another", async () => {
    const first = buffer((rows) => {
      rows.interactions.push(['t', storedInteraction('e1')], ['other', storedInteraction('e1')]);
      rows.impressions.push(['t', impression('m1', ['i'])]);
    });
    expect(await writeFlush(db, first)).toEqual({ skippedInteractions: 0, skippedImpressions: 0 });
    // Another daemon's connection: the event ids decide.
    const another = await connect(url);
    const again = buffer((rows) => {
      rows.interactions.push(['t', storedInteraction('e1', { weight: 9 })], ['t', storedInteraction('e2')]);
      rows.impressions.push(['t', impression('m1', ['i'])], ['t', impression('e1', ['i'])]);
    });
    expect(await writeFlush(another, again)).toEqual({ skippedInteractions: 1, skippedImpressions: 1 });
    expect(
      await select('SELECT tenant_id, event_id, weight FROM interactions ORDER BY tenant_id, event_id'),
    ).toEqual([
      ['other', 'e1', 1],
      ['t', 'e1', 1],
      ['t', 'e2', 1],
    ]);
    expect(await select('SELECT event_id FROM impressions ORDER BY event_id')).toEqual([['e1'], ['m1']]);
  });

  it('replaces an item or a user upserted again', async () => {
    await writeFlush(
      db,
      buffer((rows) => upsert(rows, 't', item('i1', { category: 'a', attributes: { x: 1 }, createdAt: 1 }))),
    );
    await writeFlush(
      db,
      buffer((rows) => {
        upsert(rows, 't', item('i1', { category: null, attributes: { y: 2 }, createdAt: 5, updatedAt: 6 }));
        rows.users.set(rowKey('t', 'u1'), ['t', user('u1')]);
      }),
    );
    await writeFlush(
      db,
      buffer((rows) => rows.users.set(rowKey('t', 'u1'), ['t', user('u1', { v: 1 })])),
    );
    expect(
      await select(
        'SELECT external_id, category, attributes::text, created_at::int, updated_at::int FROM items',
      ),
    ).toEqual([['i1', null, '{"y":2}', 5, 6]]);
    expect(await select('SELECT external_id, attributes::text FROM users')).toEqual([['u1', '{"v":1}']]);
  });

  it('rolls the whole flush back when one statement fails, and gives its item keys again', async () => {
    await writeFlush(
      db,
      buffer((rows) => rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 1 })),
    );
    const failing = buffer((rows) => {
      upsert(rows, 't', item('i1'));
      rows.users.set(rowKey('t', 'u1'), ['t', user('u1')]);
      rows.interactions.push(['t', storedInteraction('e1', { itemId: 'i1' })]);
      rows.impressions.push(['t', impression('m1', ['i1', 'i2'])]);
      rows.ops.push(saveConfigDocument('t', 'scenario', 'home', { name: 'home' }));
      // The tenant exists: this statement fails.
      rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 2 });
    });
    await expect(writeFlush(db, failing, 'origin')).rejects.toThrow(/duplicate key/);
    // The first flush's change (the tenant created) is all the log holds.
    const logged = ['tenants', 'change_counters', 'change_log'];
    for (const table of TABLES.filter((table) => !logged.includes(table)))
      expect(await select(`SELECT count(*)::int FROM ${table}`), table).toEqual([[0]]);
    expect(await select('SELECT tenant_id, seq::int FROM change_log')).toEqual([['t', 1]]);
    expect(await select('SELECT tenant_id, created_at::int FROM tenants')).toEqual([['t', 1]]);
    // The numbers and keys it took are given again.
    await writeFlush(
      db,
      buffer((rows) => rows.interactions.push(['t', storedInteraction('e2', { itemId: 'i2' })])),
    );
    expect(await select('SELECT event_id, seq::int, item_key FROM interactions')).toEqual([['e2', 1, 0]]);
    expect(await select('SELECT item_id, item_key FROM item_keys')).toEqual([['i2', 0]]);
  });

  it('forgets identities: their users, events and merges, and nothing of anyone else', async () => {
    await writeFlush(
      db,
      buffer((rows) => {
        for (const id of ['u1', 'u2']) rows.users.set(rowKey('t', id), ['t', user(id)]);
        rows.users.set(rowKey('other', 'u1'), ['other', user('u1')]);
        rows.interactions.push(
          ['t', storedInteraction('a', { userId: 'u1' })],
          ['t', storedInteraction('b', { userId: null, sessionId: 's1' })],
          ['t', storedInteraction('c', { userId: 'u2', sessionId: 's1' })],
          ['t', storedInteraction('d', { userId: 'u2' })],
          ['other', storedInteraction('a', { userId: 'u1' })],
        );
        rows.impressions.push(['t', impression('m1', ['i'])], ['other', impression('m1', ['i'])]);
        rows.ops.push(recordMerge('t', 'u1', 's1', 1, 1), recordMerge('t', 'u2', 's2', 1, 1));
      }),
    );
    await writeFlush(
      db,
      buffer((rows) => rows.ops.push(forgetIdentities('t', ['u1', 's1']))),
    );
    expect(await select('SELECT tenant_id, external_id FROM users ORDER BY 1, 2')).toEqual([
      ['other', 'u1'],
      ['t', 'u2'],
    ]);
    expect(await select('SELECT tenant_id, event_id FROM interactions ORDER BY 1, 2')).toEqual([
      ['other', 'a'],
      ['t', 'd'],
    ]);
    expect(await select('SELECT tenant_id FROM impressions')).toEqual([['other']]);
    expect(await select('SELECT user_id, session_id FROM merge_ledger')).toEqual([['u2', 's2']]);
  });

  it("numbers each tenant's changes in commit order, without gaps", async () => {
    const first = await connect(url);
    const second = await connect(url);
    const change = (n: number) => ({ kind: 'users' as const, tenantId: 't', userIds: [`u${n}`] });
    await first.query('BEGIN');
    await first.query(changeLogStatement('t', 'a', [change(1), change(2)]));
    // A second writer of the tenant waits for the first to commit; one of another tenant does not.
    let secondDone = false;
    const waiting = writeFlush(
      second,
      buffer((rows) => rows.ops.push(saveConfigDocument('t', 'rule', 'r', { slug: 'r' }))),
      'b',
    ).then(() => (secondDone = true));
    await writeFlush(
      db,
      buffer((rows) => rows.users.set(rowKey('u', 'x'), ['u', user('x')])),
      'c',
    );
    await untilLockWaits(1);
    expect(secondDone).toBe(false);
    await first.query('COMMIT');
    await waiting;
    // A write that rolls back takes its numbers with it.
    await first.query('BEGIN');
    await first.query(changeLogStatement('t', 'a', [change(9)]));
    await first.query('ROLLBACK');
    await writeFlush(
      db,
      buffer((rows) => rows.interactions.push(['t', storedInteraction('e1', { itemId: 'i1' })])),
      'c',
    );
    expect(
      await select(
        "SELECT tenant_id, seq::int, kind, payload->>'origin' FROM change_log ORDER BY tenant_id, seq",
      ),
    ).toEqual([
      ['t', 1, 'users', 'a'],
      ['t', 2, 'users', 'a'],
      ['t', 3, 'op', 'b'],
      ['t', 4, 'interactions', 'c'],
      ['u', 1, 'users', 'c'],
    ]);
    expect(await select('SELECT tenant_id, seq::int FROM change_counters ORDER BY 1')).toEqual([
      ['t', 4],
      ['u', 1],
    ]);
  });

  it('logs what a flush changed, by tenant, and which events it left out', async () => {
    await writeFlush(
      db,
      buffer((rows) => rows.interactions.push(['t', storedInteraction('e1', { itemId: 'i1' })])),
      'a',
    );
    const flush = buffer((rows) => {
      upsert(rows, 't', item('i2'));
      upsert(rows, 't', item('i1'));
      rows.users.set(rowKey('t', 'u1'), ['t', user('u1')]);
      rows.interactions.push(['t', storedInteraction('e1', { itemId: 'i1' })]);
      rows.interactions.push(['t', storedInteraction('e2', { itemId: 'i2' })]);
      rows.interactions.push(['o', storedInteraction('e1', { itemId: 'i1' })]);
      rows.impressions.push(['t', impression('m1', ['i1'])]);
      rows.ops.push(deleteConfigDocument('t', 'rule', 'r'));
    });
    expect(await writeFlush(db, flush, 'b')).toEqual({ skippedInteractions: 1, skippedImpressions: 0 });
    // The first interaction's event id was held: the apply steps are told it was not stored.
    expect(flush.interactions.map(([, event]) => flush.stored(event))).toEqual([false, true, true]);
    expect(flush.stored(flush.impressions[0][1])).toBe(true);
    expect(
      await select(
        "SELECT tenant_id, seq::int, payload - 'origin' - 'at' FROM change_log WHERE payload->>'origin' = 'b' ORDER BY 1, 2",
      ),
    ).toEqual([
      ['o', 1, { kind: 'interactions', tenantId: 'o', first: 1, last: 1 }],
      ['t', 2, { kind: 'items', tenantId: 't', itemIds: ['i2', 'i1'] }],
      ['t', 3, { kind: 'users', tenantId: 't', userIds: ['u1'] }],
      ['t', 4, { kind: 'interactions', tenantId: 't', first: 2, last: 3 }],
      ['t', 5, { kind: 'impressions', tenantId: 't', first: 1, last: 1 }],
      [
        't',
        6,
        {
          kind: 'op',
          tenantId: 't',
          op: { area: 'config', op: 'delete', tenantId: 't', kind: 'rule', key: 'r' },
        },
      ],
    ]);
  });

  it('writes and trims the record of answers', async () => {
    const write = (statements: { text: string; values: unknown[] }[]) =>
      inTransaction(db, () => runStatements(db, statements));
    await write(
      answerRecordWriteStatements({
        counts: [
          ['t', 10, 'home', 'als', '', 2],
          ['t', 10, 'home', 'als', '', 3],
          ['t', 11, '', 'pop', 'exp', 1],
        ],
        items: [
          ['t', 10, 'i1'],
          ['t', 10, 'i2'],
          ['t', 11, 'i1'],
        ],
        users: [['t', 11, 'exp', 'home', 'u1']],
      }),
    );
    // Another daemon records rows of the same days.
    await write(
      answerRecordWriteStatements({
        counts: [['t', 10, 'home', 'als', '', 1]],
        items: [['t', 10, 'i1']],
        users: [
          ['t', 11, 'exp', 'home', 'u1'],
          ['t', 11, 'exp', 'home', 'u2'],
        ],
      }),
    );
    expect(
      await select('SELECT day, scenario, algorithm, experiment, answers::int FROM answer_days ORDER BY day'),
    ).toEqual([
      [10, 'home', 'als', '', 6],
      [11, '', 'pop', 'exp', 1],
    ]);
    expect(await select('SELECT day, item_id FROM answer_items ORDER BY 1, 2')).toEqual([
      [10, 'i1'],
      [10, 'i2'],
      [11, 'i1'],
    ]);
    await write([
      ...answerRecordForgetUsersStatements('t', ['u1']),
      ...answerRecordForgetItemsStatements('t', ['i2']),
      ...answerRecordForgetItemsStatements('t', []),
    ]);
    expect(await select('SELECT user_id FROM experiment_users')).toEqual([['u2']]);
    await write(answerRecordWriteStatements({ counts: [], items: [], users: [], removeBefore: 11 }));
    expect(await select('SELECT day FROM answer_days')).toEqual([[11]]);
    expect(await select('SELECT day, item_id FROM answer_items')).toEqual([[11, 'i1']]);
    expect(await select('SELECT day, user_id FROM experiment_users')).toEqual([[11, 'u2']]);
  });

  it('removes items: their rows, events and keys; impressions keep the other items they showed', async () => {
    await writeFlush(
      db,
      buffer((rows) => {
        for (const id of ['a', 'x', 'b']) upsert(rows, 't', item(id));
        upsert(rows, 'other', item('x'));
        rows.interactions.push(
          ['t', storedInteraction('e1', { itemId: 'x' })],
          ['t', storedInteraction('', { eventId: null, itemId: 'x' })],
          ['t', storedInteraction('e2', { itemId: 'a' })],
          ['other', storedInteraction('e1', { itemId: 'x' })],
        );
        rows.impressions.push(
          ['t', impression('m1', ['a', 'x', 'b'])],
          ['t', impression('m2', ['x'])],
          ['t', impression('m3', ['b'])],
          ['other', impression('m2', ['x'])],
        );
      }),
    );
    expect(await removeItems(db, 't', ['x', 'x'])).toEqual({
      items: 1,
      // 2 interactions, 1 impression kept, 1 impression removed, 1 key
      rows: 1 + 2 + 1 + 1 + 1,
      interactionEventIds: ['e1'],
      impressionEventIds: ['m2'],
    });
    expect(await select('SELECT external_id FROM items WHERE tenant_id = $1 ORDER BY 1', ['t'])).toEqual([
      ['a'],
      ['b'],
    ]);
    expect(await select("SELECT event_id FROM interactions WHERE tenant_id = 't'")).toEqual([['e2']]);
    expect(
      await select("SELECT event_id, item_ids, item_keys FROM impressions WHERE tenant_id = 't' ORDER BY 1"),
    ).toEqual([
      ['m1', ['a', 'b'], [1, 2]],
      ['m3', ['b'], [2]],
    ]);
    expect(await select("SELECT item_id FROM item_keys WHERE tenant_id = 't' ORDER BY 1")).toEqual([
      ['a'],
      ['b'],
    ]);
    expect(await select("SELECT count(*)::int FROM impressions WHERE tenant_id = 'other'")).toEqual([[1]]);
  });

  /** Resolves once `count` sessions wait for a lock. */
  async function untilLockWaits(count: number): Promise<void> {
    const waiting = "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
    while ((await select(waiting))[0][0] !== count) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  function select(text: string, values: unknown[] = []): Promise<unknown[][]> {
    return selectRows(db, text, values);
  }
});
