import { sqlOp } from '../../../src/store/api/ops.js';
import { spawnSync } from 'node:child_process';
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it, vi } from 'vitest';
import { DuckDbStore, eventLogDirOf, recordLogDirOf } from '../../../src/store/database.js';
import type { StoredItem } from '../../../src/store/rows.js';
import { COMPILED_DATABASE, storeDirs } from '../../support/store-dirs.js';
import { storedEventIds, storedInteraction } from '../../support/temp-store.js';

const { dataDir, open, close } = storeDirs('nextrec-records-');

function segments(dir: string): string[] {
  return readdirSync(recordLogDirOf(path.join(dir, 'nextrec.duckdb'))).sort();
}

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

function upsert(store: DuckDbStore, ...items: StoredItem[]): Promise<void> {
  return store.writes.submit((rows) => {
    for (const it of items) rows.items.set(`t\u0000${it.externalId}`, ['t', it]);
    return () => undefined;
  });
}

/** An interaction with item `x`, acknowledged from the interactions log. */
function viewX(store: DuckDbStore): Promise<void> {
  return store.writes.submit(
    (rows) => {
      rows.interactions.push(['t', storedInteraction('e1', { itemId: 'x' })]);
      return () => undefined;
    },
    1,
    { interactionsOnly: true },
  );
}

/** Stored items: id, category, attributes (as text), expiry, available, feed-managed, times. */
async function storedItems(store: DuckDbStore): Promise<unknown[][]> {
  return store.read(
    async (db) =>
      (
        await db.runAndReadAll(
          `SELECT external_id, category, attributes::VARCHAR, expires_at, available, feed_managed,
                  created_at::DOUBLE, updated_at::DOUBLE
           FROM items ORDER BY external_id`,
        )
      ).getRowsJS() as unknown[][],
  );
}

/** Runs a child process that upserts items `<prefix>-<n>` one write each and dies with SIGKILL right after. */
function upsertAndDie(dir: string, prefix: string, count: number): void {
  const script = `
    const { DuckDbStore } = await import(${JSON.stringify(COMPILED_DATABASE)});
    const store = await DuckDbStore.open(${JSON.stringify(dir)});
    for (let n = 0; n < ${count}; n++)
      await store.writes.submit((rows) => {
        const id = '${prefix}-' + n;
        rows.items.set('t\\u0000' + id, ['t', { externalId: id, category: 'c', attributes: { n }, expiresAt: null,
          available: true, feedManaged: false, createdAt: n, updatedAt: n }]);
        return () => undefined;
      });
    process.kill(process.pid, 'SIGKILL');`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(child.signal, child.stderr).toBe('SIGKILL');
}

describe('the records log', () => {
  it('acknowledges item upserts from its file without a commit of the store, interactions beside them from theirs', async () => {
    const dir = dataDir();
    const store = await open(dir);
    const connection = await store.writes.exclusive(async (c) => c);
    const run = vi.spyOn(connection, 'run');
    await Promise.all([
      upsert(store, item('x', { attributes: { price: 1 } })),
      store.writes.submit(
        (rows) => {
          rows.interactions.push(['t', storedInteraction('e1', { itemId: 'x' })]);
          return () => undefined;
        },
        1,
        { interactionsOnly: true },
      ),
      upsert(store, item('x', { attributes: { price: 2 } }), item('y')),
    ]);
    expect(run).not.toHaveBeenCalled();
    expect(segments(dir)).toHaveLength(1);
    expect(readdirSync(eventLogDirOf(store.file))).toHaveLength(1);
    run.mockRestore();
    // A read moves both logs first; of the two rows of `x` in one segment the later one is stored.
    expect((await storedItems(store)).map((row) => row.slice(0, 3))).toEqual([
      ['x', null, '{"price":2}'],
      ['y', null, '{}'],
    ]);
    expect(await storedEventIds(store)).toEqual(['e1']);
    expect(segments(dir)).toEqual([]);
  });

  it('is moved by reads of the whole store, not by reads of the event tables alone nor of the daemon’s own record', async () => {
    const dir = dataDir();
    const store = await open(dir);
    await upsert(store, item('x'));
    await viewX(store);
    const count = (table: string) => async (db: DuckDBConnection) =>
      Number((await db.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0][0]);
    // Neither log moves: the read sees the store as the last move left it.
    expect(await store.read(count('interactions'), 'none')).toBe(0);
    expect(await store.read(count('items'), 'none')).toBe(0);
    // The interactions log alone moves; the upsert waits in its own.
    expect(await store.read(count('interactions'), 'events')).toBe(1);
    expect(await store.read(count('items'), 'events')).toBe(0);
    expect(segments(dir)).toHaveLength(1);
    // A read of everything moves it too.
    expect(await store.read(count('items'))).toBe(1);
    expect(segments(dir)).toEqual([]);
  });

  it('is moved by its timer within 30 s, where the interactions log is moved within 5 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const store = await open(dataDir());
      await upsert(store, item('x'));
      await viewX(store);
      // A task on the store's connection after the timer's move, which moves nothing itself.
      const afterMoves = () => store.writes.exclusive(async () => undefined, undefined, false);
      expect(store.writes.unmoved).toEqual({ interactions: 1, records: 1 });
      vi.advanceTimersByTime(5_000);
      await afterMoves();
      expect(store.writes.unmoved).toEqual({ interactions: 0, records: 1 });
      for (const waited of [10, 15, 20]) {
        vi.advanceTimersByTime(5_000);
        await afterMoves();
        expect(store.writes.unmoved.records, `after ${waited} s`).toBe(1);
      }
      for (let waited = 25; waited <= 30 && store.writes.unmoved.records > 0; waited += 5) {
        vi.advanceTimersByTime(5_000);
        await afterMoves();
      }
      expect(store.writes.unmoved.records).toBe(0);
      expect((await storedItems(store)).map((row) => row[0])).toEqual(['x']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('moves its rows before a write that changes items in the store, so the later write stands', async () => {
    const store = await open(dataDir());
    await upsert(store, item('x', { category: 'first' }));
    await store.writes.submit((rows) => {
      rows.ops.push(
        sqlOp({
          sql: `UPDATE items SET category = 'second' WHERE external_id = 'x'`,
          params: [],
        }),
      );
      return () => undefined;
    });
    // A move after the statement would have put `first` back.
    expect((await storedItems(store)).map((row) => row[1])).toEqual(['second']);
  });

  it('keeps users and every text as it came: quotes, commas, line breaks, non-ASCII, NUL, absent values', async () => {
    const store = await open(dataDir());
    const odd = ['a "quoted", text\nacross lines\r', 'ünïcödé ✓ 😀', 'nul\u0000in it', 'back\\slash', ''];
    await upsert(
      store,
      ...odd.map((text, n) =>
        item(`i${n}${text}`, {
          category: n % 2 ? null : text,
          attributes: { text, n, nested: { list: [text, null, 1.5] } },
          expiresAt: n % 2 ? '2030-01-01T00:00:00.000Z' : null,
          available: n % 2 === 0,
          feedManaged: n % 3 === 0,
          createdAt: n,
          updatedAt: 1_700_000_000_000 + n,
        }),
      ),
    );
    await store.writes.submit((rows) => {
      rows.users.set('t\u0000u"1', [
        't',
        { externalId: 'u"1', attributes: { odd }, createdAt: 5, updatedAt: 6 },
      ]);
      return () => undefined;
    });
    const rows = await storedItems(store);
    expect(rows).toHaveLength(odd.length);
    for (const [n, text] of odd.entries()) {
      const row = rows.find((r) => r[0] === `i${n}${text}`)!;
      expect(row[1]).toBe(n % 2 ? null : text);
      expect(JSON.parse(row[2] as string)).toEqual({ text, n, nested: { list: [text, null, 1.5] } });
      expect(row.slice(3)).toEqual([
        n % 2 ? '2030-01-01T00:00:00.000Z' : null,
        n % 2 === 0,
        n % 3 === 0,
        n,
        1_700_000_000_000 + n,
      ]);
    }
    const users = await store.read(
      async (db) =>
        (
          await db.runAndReadAll('SELECT external_id, attributes::VARCHAR, created_at::INTEGER FROM users')
        ).getRowsJS() as unknown[][],
    );
    expect(users.map(([id, attributes, created]) => [id, JSON.parse(attributes as string), created])).toEqual(
      [['u"1', { odd }, 5]],
    );
  });

  it('keeps every acknowledged upsert through SIGKILL and moves it at the next start', async () => {
    const dir = dataDir();
    upsertAndDie(dir, 'first', 30);
    // The killed process moved nothing: its rows are in the log only.
    expect(segments(dir).length).toBeGreaterThan(0);
    const store = await open(dir);
    expect(segments(dir)).toEqual([]);
    const rows = await storedItems(store);
    expect(rows.map((row) => row[0]).sort()).toEqual(
      Array.from({ length: 30 }, (_, n) => `first-${n}`).sort(),
    );
    expect(rows.find((row) => row[0] === 'first-7')!.slice(1, 3)).toEqual(['c', '{"n":7}']);
  });

  it('drops a row cut short by a crash, and never puts back a row the store already holds a later one of', async () => {
    const dir = dataDir();
    upsertAndDie(dir, 'kept', 3);
    const [segment] = segments(dir);
    const file = path.join(recordLogDirOf(path.join(dir, 'nextrec.duckdb')), segment);
    // A write that never finished: half a line, never acknowledged.
    appendFileSync(file, '{"table":"items","seq":4,"tenant_id":"t","external_id":"torn"');
    const store = await open(dir);
    expect((await storedItems(store)).map((row) => row[0])).toEqual(['kept-0', 'kept-1', 'kept-2']);
    // Later, the store changes kept-1 through a write of its own.
    await store.writes.submit((rows) => {
      rows.ops.push(
        sqlOp({
          sql: `UPDATE items SET category = 'later' WHERE external_id = 'kept-1'`,
          params: [],
        }),
      );
      return () => undefined;
    });
    await close(store);
    // The moved segment again (as if its removal did not survive a crash), and one past the store's mark.
    writeFileSync(
      file,
      ['kept-0', 'kept-1', 'kept-2']
        .map((id, n) =>
          JSON.stringify({
            table: 'items',
            seq: n + 1,
            tenant_id: 't',
            external_id: id,
            category: 'old',
            attributes: '{}',
            available: true,
            feed_managed: false,
            created_at: 1,
            updated_at: 1,
          }),
        )
        .join('\n') + '\n',
    );
    const next = path.join(path.dirname(file), 'records-0000000000000004.jsonl');
    writeFileSync(
      next,
      JSON.stringify({
        table: 'users',
        seq: 4,
        tenant_id: 't',
        external_id: 'new-user',
        attributes: '{}',
        created_at: 1,
        updated_at: 1,
      }) + '\n',
    );
    const reopened = await open(dir);
    expect((await storedItems(reopened)).map((row) => row.slice(0, 2))).toEqual([
      ['kept-0', 'c'],
      ['kept-1', 'later'],
      ['kept-2', 'c'],
    ]);
    const users = await reopened.read(
      async (db) => (await db.runAndReadAll('SELECT external_id FROM users')).getRowsJS() as unknown[][],
    );
    expect(users).toEqual([['new-user']]);
    expect(segments(dir)).toEqual([]);
    // Sequence numbers go on after the last one stored: a new upsert is not taken for an old one.
    await upsert(reopened, item('kept-2', { category: 'newest' }));
    expect((await storedItems(reopened)).find((row) => row[0] === 'kept-2')![1]).toBe('newest');
  });
});
