import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { saveConfigDocument } from '../../../src/store/api/config.js';
import { forgetIdentities } from '../../../src/store/api/identity.js';
import { removeItems } from '../../../src/store/postgres/catalog.js';
import { POSTGRES_MIGRATIONS, migratePostgres } from '../../../src/store/postgres/migrations.js';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import { rowKey, type RowBuffer, type StoredInteraction, type StoredItem } from '../../../src/store/rows.js';
import type { Store } from '../../../src/store/store.js';
import { WriteQueueFullError, type Write } from '../../../src/store/write-queue.js';
import { postgresOfTests } from '../../support/postgres.js';
import { storedInteraction } from '../../support/temp-store.js';

const { connect, emptyDatabase, open } = postgresOfTests('queue');

/** A store on a new database, and a client of that database to look at what it holds. */
async function freshStore(): Promise<{ store: PgStore; db: pg.Client; url: string }> {
  const url = await emptyDatabase();
  const store = await open(url);
  return { store, db: await connect(url), url };
}

async function select(db: pg.ClientBase, text: string, values: unknown[] = []): Promise<unknown[][]> {
  return (await db.query({ text, values, rowMode: 'array' })).rows as unknown[][];
}

/** A write of interactions of tenant `tenantId`, answering their event ids. */
function interactions(tenantId: string, ...events: StoredInteraction[]): Write<string[]> {
  return (rows) => {
    for (const event of events) rows.interactions.push([tenantId, event]);
    return () => events.map((event) => String(event.eventId));
  };
}

/** Counts the transactions the store's queue commits, and the writes each held. */
function countCommits(store: PgStore): number[] {
  const commits: number[] = [];
  store.writes.observe({
    committed: (_seconds, writes) => commits.push(writes),
    refused: () => undefined,
    moveFailed: () => undefined,
  });
  return commits;
}

/** Resolves once `count` sessions of the cluster wait for a lock. */
async function untilLockWaits(db: pg.ClientBase, count: number): Promise<void> {
  const waiting = "SELECT count(*)::int FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
  while ((await select(db, waiting))[0][0] !== count) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('the PostgreSQL write queue', () => {
  it('commits writes queued together in one transaction and applies each, in order, after the commit', async () => {
    const { store, db } = await freshStore();
    const commits = countCommits(store);
    const order: string[] = [];
    const ids = Array.from({ length: 50 }, (_, i) => `e${String(i).padStart(2, '0')}`);
    const results = await Promise.all(
      ids.map((id) =>
        store.writes.submit((rows) => {
          rows.interactions.push(['t', storedInteraction(id)]);
          order.push(`build ${id}`);
          return () => {
            order.push(`apply ${id}`);
            return id;
          };
        }),
      ),
    );
    expect(results).toEqual(ids);
    expect(commits).toEqual([50]);
    expect(order).toEqual([...ids.map((id) => `build ${id}`), ...ids.map((id) => `apply ${id}`)]);
    // Numbered in the order the writes were queued.
    expect(await select(db, 'SELECT event_id, seq::int FROM interactions ORDER BY seq')).toEqual(
      ids.map((id, i) => [id, i + 1]),
    );
    expect(store.writes.depth()).toEqual({ records: 0, writes: 0, limit: Infinity, logRows: 0 });
  });

  it('takes every write queued while a flush commits into the next flush', async () => {
    const { store, db, url } = await freshStore();
    await store.writes.submit(interactions('t', storedInteraction('first')));
    const commits = countCommits(store);
    // Another daemon's flush of the tenant holds its counters: this store's next flush waits for it.
    const other = await connect(url);
    await other.query('BEGIN');
    await other.query("SELECT * FROM event_counters WHERE tenant_id = 't' FOR UPDATE");
    const waiting = store.writes.submit(interactions('t', storedInteraction('a')));
    await untilLockWaits(db, 1);
    const later = Array.from({ length: 20 }, (_, i) =>
      store.writes.submit(interactions('t', storedInteraction(`b${i}`))),
    );
    await other.query('COMMIT');
    await Promise.all([waiting, ...later]);
    expect(commits).toEqual([1, 20]);
    expect(await select(db, 'SELECT count(*)::int, max(seq)::int FROM interactions')).toEqual([[22, 22]]);
  });

  it('lets later writes of a flush see earlier ones through the scratch space', async () => {
    const { store } = await freshStore();
    const seen = await Promise.all(
      [1, 2, 3].map(() =>
        store.writes.submit((_rows, scratch) => {
          const count = ((scratch.get('n') as number | undefined) ?? 0) + 1;
          scratch.set('n', count);
          return () => count;
        }),
      ),
    );
    expect(seen).toEqual([1, 2, 3]);
  });

  it('fails only the write that breaks the commit; its neighbours commit, numbered as if it had not been', async () => {
    const { store, db } = await freshStore();
    await store.writes.submit((rows) => {
      rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 1 });
      return () => undefined;
    });
    const commits = countCommits(store);
    const outcomes = await Promise.allSettled([
      store.writes.submit(interactions('t', storedInteraction('ok-1', { itemId: 'a' }))),
      store.writes.submit((rows) => {
        rows.interactions.push(['t', storedInteraction('broken', { itemId: 'b' })]);
        // The tenant exists: the statement fails.
        rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 2 });
        return () => 'broken';
      }),
      store.writes.submit(interactions('t', storedInteraction('ok-2', { itemId: 'c' }))),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '23505' });
    // The flush of all three rolled back; each was tried again alone.
    expect(commits).toEqual([1, 1]);
    expect(await select(db, 'SELECT event_id, seq::int, item_key FROM interactions ORDER BY seq')).toEqual([
      ['ok-1', 1, 0],
      ['ok-2', 2, 1],
    ]);
    expect(await select(db, 'SELECT item_id, item_key FROM item_keys ORDER BY item_key')).toEqual([
      ['a', 0],
      ['c', 1],
    ]);
    expect(store.writes.depth().writes).toBe(0);
  });

  it('refuses a bounded write that would take it over its limit with WriteQueueFullError, queueing nothing of it', async () => {
    const { store, db } = await freshStore();
    let refused = 0;
    store.writes.observe({
      committed: () => undefined,
      refused: () => refused++,
      moveFailed: () => undefined,
    });
    store.writes.setLimit(3);
    const events = (...ids: string[]) => interactions('t', ...ids.map((id) => storedInteraction(id)));
    const first = store.writes.submit(events('a', 'b'), 2);
    const second = store.writes.submit(events('c'), 1);
    expect(store.writes.depth()).toEqual({ records: 3, writes: 2, limit: 3, logRows: 0 });
    const third = store.writes.submit(events('d'), 1);
    await expect(third).rejects.toBeInstanceOf(WriteQueueFullError);
    await expect(third).rejects.toMatchObject({ queued: 3, limit: 3 });
    expect(refused).toBe(1);
    // A write that counts no records is never refused.
    const unbounded = store.writes.submit(events('e'));
    expect(await Promise.all([first, second, unbounded])).toEqual([['a', 'b'], ['c'], ['e']]);
    expect(store.writes.depth()).toEqual({ records: 0, writes: 0, limit: 3, logRows: 0 });
    // An empty queue takes a write larger than its limit.
    expect(await store.writes.submit(events('f', 'g', 'h', 'i'), 4)).toEqual(['f', 'g', 'h', 'i']);
    expect(await select(db, 'SELECT event_id FROM interactions ORDER BY event_id')).toEqual(
      ['a', 'b', 'c', 'e', 'f', 'g', 'h', 'i'].map((id) => [id]),
    );
  });

  it('frees the records of a failed write', async () => {
    const { store } = await freshStore();
    store.writes.setLimit(1);
    const failing: Write<void> = (rows) => {
      rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 1 });
      rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 2 });
      return () => undefined;
    };
    await expect(store.writes.submit(failing, 1)).rejects.toThrow(/duplicate key/);
    expect(store.writes.depth().records).toBe(0);
    expect(await store.writes.submit(interactions('t', storedInteraction('a')), 1)).toEqual(['a']);
  });

  it('tells the tenants of each commit', async () => {
    const { store } = await freshStore();
    const committed: string[][] = [];
    store.writes.onCommitted((tenantIds) => committed.push([...tenantIds].sort()));
    await Promise.all([
      store.writes.submit(interactions('b', storedInteraction('1'))),
      store.writes.submit((rows) => {
        rows.users.set(rowKey('a', 'u'), [
          'a',
          { externalId: 'u', attributes: {}, createdAt: 1, updatedAt: 1 },
        ]);
        return () => undefined;
      }),
    ]);
    expect(committed).toEqual([['a', 'b']]);
    await store.writes.settled();
  });

  it('commits what is queued when the store closes, then refuses writes', async () => {
    const { store, db } = await freshStore();
    const ids = Array.from({ length: 10 }, (_, i) => `e${i}`);
    const writes = ids.map((id) => store.writes.submit(interactions('t', storedInteraction(id))));
    await store.close();
    expect(await Promise.all(writes)).toEqual(ids.map((id) => [id]));
    expect(await select(db, 'SELECT count(*)::int FROM interactions')).toEqual([[10]]);
    await expect(store.writes.submit(interactions('t', storedInteraction('late')))).rejects.toThrow(/closed/);
    await expect(store.scrub()).rejects.toThrow(/closed/);
  });
});

describe('two PgStores on one database', () => {
  /** Events of `count` writes to `store`, each naming one of 20 items, and impressions naming three. */
  function writeMany(store: PgStore, label: string, count: number): Promise<unknown>[] {
    return Array.from({ length: count }, (_, i) =>
      store.writes.submit((rows: RowBuffer) => {
        const tenantId = i % 3 === 0 ? 'u' : 't';
        rows.interactions.push([
          tenantId,
          storedInteraction(`${label}-${i}`, { itemId: `i${(i * 7) % 20}` }),
        ]);
        rows.impressions.push([
          tenantId,
          {
            eventId: `${label}-m${i}`,
            userId: 'u',
            itemIds: [`i${(i * 3) % 20}`, `i${(i * 11) % 20}`, `n${i % 5}`],
            scenarioSlug: null,
            country: null,
            recommId: null,
            ts: 1,
            receivedAt: 1,
          },
        ]);
        return () => undefined;
      }),
    );
  }

  /** Queues writes to both stores a few at a time, so that their flushes interleave. */
  async function writeBoth(a: PgStore, b: PgStore, rounds: number, perRound: number): Promise<void> {
    const writes: Promise<unknown>[] = [];
    for (let round = 0; round < rounds; round++) {
      writes.push(...writeMany(a, `a${round}`, perRound), ...writeMany(b, `b${round}`, perRound));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await Promise.all(writes);
  }

  it('give one key per item and distinct sequence numbers when they write the same new items at once', async () => {
    const url = await emptyDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    const commits = [countCommits(a), countCommits(b)];
    await writeBoth(a, b, 10, 6);
    // Both stores committed several flushes, which took turns on the tenants' counters.
    expect(commits[0].length).toBeGreaterThan(1);
    expect(commits[1].length).toBeGreaterThan(1);
    const db = await connect(url);
    // Each tenant's items have keys 0, 1, 2, ... each once, and every event names its item's key.
    expect(
      await select(
        db,
        `SELECT tenant_id, count(*)::int, count(DISTINCT item_id)::int, min(item_key), max(item_key)
           FROM item_keys GROUP BY tenant_id ORDER BY tenant_id`,
      ),
    ).toEqual([
      ['t', 14, 14, 0, 13],
      ['u', 6, 6, 0, 5],
    ]);
    expect(
      await select(
        db,
        `SELECT count(*)::int FROM interactions i
           LEFT JOIN item_keys k ON k.tenant_id = i.tenant_id AND k.item_id = i.item_id
          WHERE k.item_key IS DISTINCT FROM i.item_key`,
      ),
    ).toEqual([[0]]);
    expect(
      await select(
        db,
        `SELECT count(*)::int FROM impressions m CROSS JOIN LATERAL unnest(m.item_ids, m.item_keys) AS s(item_id, item_key)
           LEFT JOIN item_keys k ON k.tenant_id = m.tenant_id AND k.item_id = s.item_id
          WHERE k.item_key IS DISTINCT FROM s.item_key`,
      ),
    ).toEqual([[0]]);
    // Each tenant's events numbered 1, 2, 3, ... once each, in each table.
    for (const table of ['interactions', 'impressions'])
      expect(
        await select(
          db,
          `SELECT tenant_id, count(*)::int, count(DISTINCT seq)::int, min(seq)::int, max(seq)::int
             FROM ${table} GROUP BY tenant_id ORDER BY tenant_id`,
        ),
        table,
      ).toEqual([
        ['t', 80, 80, 1, 80],
        ['u', 40, 40, 1, 40],
      ]);
  });

  it('keep one event of an event id both are sent', async () => {
    const url = await emptyDatabase();
    const [a, b] = await Promise.all([open(url), open(url)]);
    const ids = Array.from({ length: 30 }, (_, i) => `e${i}`);
    const sendAll = (store: PgStore) =>
      ids.map((id) => store.writes.submit(interactions('t', storedInteraction(id, { itemId: id }))));
    // Each daemon answers every write: an event id already stored counts as accepted (CONTRACT.md).
    await Promise.all([...sendAll(a), ...sendAll(b), ...sendAll(a)]);
    const db = await connect(url);
    expect(
      await select(
        db,
        'SELECT count(*)::int, count(DISTINCT event_id)::int, count(DISTINCT seq)::int FROM interactions',
      ),
    ).toEqual([[30, 30, 30]]);
  });
});

describe('PgStore', () => {
  it('counts on from what a database written before its counters holds', async () => {
    const url = await emptyDatabase();
    const db = await connect(url);
    await migratePostgres(
      db,
      POSTGRES_MIGRATIONS.filter((migration) => migration.version <= 2),
    );
    // Written with numbers given by one process (a global sequence): each tenant counts on from its own.
    await db.query(`INSERT INTO interactions (tenant_id, item_id, type, weight, ts, received_at, seq, item_key, identity_hash)
                    VALUES ('t', 'a', 'view', 1, 1, 1, 7, 0, 0), ('u', 'a', 'view', 1, 1, 1, 9, 0, 0)`);
    await db.query(`INSERT INTO impressions (tenant_id, item_ids, ts, received_at, seq, item_keys)
                    VALUES ('t', '{b}', 1, 1, 4, '{1}')`);
    await db.query(`INSERT INTO item_keys VALUES ('t', 'a', 0), ('t', 'b', 1), ('u', 'a', 0)`);
    const store = await open(url);
    await store.writes.submit((rows) => {
      rows.interactions.push(
        ['t', storedInteraction('x', { itemId: 'c' })],
        ['u', storedInteraction('y', { itemId: 'a' })],
      );
      rows.impressions.push([
        't',
        {
          eventId: null,
          userId: null,
          itemIds: ['c', 'a'],
          scenarioSlug: null,
          country: null,
          recommId: null,
          ts: 1,
          receivedAt: 1,
        },
      ]);
      return () => undefined;
    });
    expect(
      await select(
        db,
        'SELECT tenant_id, event_id, seq::int, item_key FROM interactions WHERE event_id IS NOT NULL ORDER BY 1',
      ),
    ).toEqual([
      ['t', 'x', 8, 2],
      ['u', 'y', 10, 0],
    ]);
    expect(await select(db, 'SELECT seq::int, item_keys FROM impressions ORDER BY seq')).toEqual([
      [4, [1]],
      [5, [2, 0]],
    ]);
  });

  it('makes a removal of items wait for a flush of their tenant that holds its counters', async () => {
    const { store, db, url } = await freshStore();
    await store.writes.submit(interactions('t', storedInteraction('a', { itemId: 'x' })));
    const flush = await connect(url);
    await flush.query('BEGIN');
    await flush.query("SELECT * FROM event_counters WHERE tenant_id = 't' FOR UPDATE");
    const removal = await connect(url);
    let removed = false;
    const removing = removeItems(removal, 't', ['x']).then(() => (removed = true));
    await untilLockWaits(db, 1);
    expect(removed).toBe(false);
    await flush.query('COMMIT');
    await removing;
    expect(await select(db, 'SELECT count(*)::int FROM item_keys')).toEqual([[0]]);
  });

  it("makes the bytes of deleted rows leave the server's files when it scrubs", async () => {
    const { store, db } = await freshStore();
    const secret = 'zz-secret-user-4711';
    const user = (externalId: string) => ({ externalId, attributes: {}, createdAt: 1, updatedAt: 1 });
    await store.writes.submit((rows) => {
      for (let i = 0; i < 100; i++) rows.users.set(rowKey('t', `u${i}`), ['t', user(`u${i}`)]);
      for (let i = 0; i < 100; i++)
        rows.interactions.push(['t', storedInteraction(`e${i}`, { userId: `u${i}` })]);
      return () => undefined;
    });
    // Written last: the rows at the free end of their pages.
    await store.writes.submit((rows) => {
      rows.users.set(rowKey('t', secret), ['t', user(secret)]);
      rows.interactions.push(['t', storedInteraction('secret-event', { userId: secret })]);
      return () => undefined;
    });
    await store.writes.submit((rows) => {
      rows.ops.push(forgetIdentities('t', [secret]));
      return () => undefined;
    });
    const dataDir = String((await select(db, 'SHOW data_directory'))[0][0]);
    const holdsSecret = async () => {
      await db.query('CHECKPOINT');
      const files = await select(
        db,
        `SELECT pg_relation_filepath(c.oid) FROM pg_class c
          WHERE c.relname IN ('users', 'users_pkey', 'interactions', 'interactions_event_id')`,
      );
      return files.some(([file]) => readFileSync(path.join(dataDir, String(file))).includes(secret));
    };
    // A plain VACUUM frees the deleted rows' space but leaves their bytes in it (pg-store.ts, scrub).
    await db.query('VACUUM users, interactions');
    expect(await holdsSecret()).toBe(true);
    await Promise.all([store.scrub(), store.scrub()]);
    expect(await holdsSecret()).toBe(false);
    expect(await select(db, 'SELECT count(*)::int FROM users')).toEqual([[100]]);
  });

  it("reports the server's disk full from a write it refused for room until one commits again", async () => {
    const { store, db } = await freshStore();
    // The server answers the document's insert as it does when its disk is full.
    await db.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
                    $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`);
    await db.query(
      'CREATE TRIGGER full_disk BEFORE INSERT ON config_documents FOR EACH ROW EXECUTE FUNCTION refuse()',
    );
    const save = (rows: RowBuffer) => {
      rows.ops.push(saveConfigDocument('t', 'scenario', 'home', { name: 'home' }));
      return () => undefined;
    };
    expect(await store.disk.report()).toBe('ok');
    await expect(store.writes.submit(save)).rejects.toMatchObject({ code: '53100' });
    expect(store.disk.isFull).toBe(true);
    expect(await store.disk.report()).toBe('full');
    expect(store.invalidated).toBe(false);
    await db.query('DROP TRIGGER full_disk ON config_documents');
    await store.writes.submit(save);
    expect(store.disk.isFull).toBe(false);
    expect(await store.disk.report()).toBe('ok');
  });

  it('commits with synchronous_commit on even where the database turns it off', async () => {
    const url = await emptyDatabase();
    const admin = await connect(url);
    await admin.query(`ALTER DATABASE ${url.replace(/^.*\//, '')} SET synchronous_commit = off`);
    const store = await open(url);
    // The store's own sessions (its pool is private to it).
    const setting = await store['pool'].query<{ synchronous_commit: string }>('SHOW synchronous_commit');
    expect(setting.rows[0].synchronous_commit).toBe('on');
  });
});

describe('the PostgreSQL store through the Store interface', () => {
  const item = (externalId: string): StoredItem => ({
    externalId,
    category: null,
    attributes: { title: externalId },
    expiresAt: null,
    available: true,
    feedManaged: false,
    createdAt: 1,
    updatedAt: 1,
  });

  it('reads what its writes committed through each area', async () => {
    const { store } = await freshStore();
    const asStore: Store = store;
    await asStore.writes.submit((rows) => {
      rows.ops.push({ area: 'tenants', op: 'create', tenantId: 't', createdAt: 5 });
      for (const id of ['a', 'b']) rows.items.set(rowKey('t', id), ['t', item(id)]);
      rows.interactions.push(['t', storedInteraction('e1', { itemId: 'a', ts: 10, receivedAt: 10 })]);
      return () => undefined;
    });
    expect(await asStore.tenants.ids()).toEqual(['t']);
    const page = await asStore.catalog.listItems('t', 1, 10);
    expect(page.total).toBe(2);
    expect(page.rows.map((row) => [row.externalId, row.attributes])).toEqual([
      ['a', { title: 'a' }],
      ['b', { title: 'b' }],
    ]);
    expect(await asStore.load.interactionTotals()).toEqual([{ tenantId: 't', total: 1 }]);
    expect(await asStore.identity.interactionEventIds('t', ['u'])).toEqual(['e1']);
  });

  it('removes items between two flushes: a write queued after the removal is built once it committed', async () => {
    const { store } = await freshStore();
    await store.writes.submit((rows) => {
      for (const id of ['a', 'b']) rows.items.set(rowKey('t', id), ['t', item(id)]);
      rows.interactions.push(['t', storedInteraction('e1', { itemId: 'a' })]);
      return () => undefined;
    });
    const order: string[] = [];
    const removal = store.catalog.removeItems('t', ['a'], (removed) => {
      order.push('removed');
      return removed;
    });
    const later = store.writes.submit(() => {
      order.push('built');
      return () => undefined;
    });
    const removed = await removal;
    await later;
    expect(order).toEqual(['removed', 'built']);
    expect(removed).toMatchObject({ items: 1, interactionEventIds: ['e1'] });
    expect((await store.catalog.listItems('t', 1, 10)).rows.map((row) => row.externalId)).toEqual(['b']);
    // No ids: nothing removed, the callback still runs in turn.
    expect(await store.catalog.removeItems('t', [], (r) => r.items)).toBe(0);
  });
});
