import { sqlOp } from '../../../src/store/api/ops.js';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DuckDbStore, scrubFileOf } from '../../../src/store/database.js';
import { writeApart } from '../../../src/store/duckdb/write-apart.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import type { RowBuffer, StoredInteraction, StoredItem } from '../../../src/store/rows.js';

const ERASED = 'zz-erase-me-zz';
const TENANT = 'shop';
const COMMITS = 5;
const ROWS_PER_COMMIT = 1_000;
/** Every this many rows is one of the erased user's. */
const ERASED_EVERY = 10;

let dir: string;
let store: DuckDbStore;

function interaction(eventId: string, userId: string): StoredInteraction {
  return {
    eventId,
    userId,
    sessionId: `session-of-${userId}`,
    itemId: `item-${eventId.length % 7}`,
    type: 'view',
    weight: 1,
    scenarioSlug: null,
    country: 'de',
    ts: 1,
    receivedAt: 1,
  };
}

function item(externalId: string, category: string): StoredItem {
  return {
    externalId,
    category,
    attributes: {},
    expiresAt: null,
    available: true,
    feedManaged: false,
    createdAt: 1,
    updatedAt: 1,
  };
}

/** Commits what `fill` adds to one flush's rows. */
function write(fill: (rows: RowBuffer) => void): Promise<void> {
  return store.writes.submit((rows) => {
    fill(rows);
    return () => undefined;
  });
}

async function query(sql: string, params: (string | number)[] = []): Promise<unknown[][]> {
  return store.read(async (db) => (await db.runAndReadAll(sql, params)).getRowsJS());
}

async function count(sql: string, params: (string | number)[] = []): Promise<number> {
  return Number((await query(sql, params))[0][0]);
}

/** Whether the store file or its log holds the bytes of `text`. */
function onDisk(text: string): boolean {
  const needle = Buffer.from(text);
  return [store.file, `${store.file}.wal`].some(
    (file) => existsSync(file) && readFileSync(file).includes(needle),
  );
}

/** Many interactions over several commits (every tenth the erased user's) and the erased user's row. */
async function fillStore(): Promise<void> {
  for (let commit = 0; commit < COMMITS; commit++) {
    await write((rows) => {
      for (let i = 0; i < ROWS_PER_COMMIT; i++) {
        const n = commit * ROWS_PER_COMMIT + i;
        const userId = n % ERASED_EVERY === 0 ? ERASED : `user-${n % 97}`;
        rows.interactions.push([TENANT, interaction(`event-${n}`, userId)]);
      }
    });
  }
  await write((rows) => {
    for (const externalId of [ERASED, 'kept-user']) {
      rows.users.set(externalId, [
        TENANT,
        { externalId, attributes: { note: externalId }, createdAt: 1, updatedAt: 1 },
      ]);
    }
  });
}

async function deleteErasedUser(): Promise<void> {
  await write((rows) => {
    rows.ops.push(
      ...[
        {
          sql: 'DELETE FROM interactions WHERE user_id = $1 OR session_id = $2',
          params: [ERASED, `session-of-${ERASED}`],
        },
        { sql: 'DELETE FROM users WHERE external_id = $1', params: [ERASED] },
      ].map(sqlOp),
    );
  });
}

/** Closes the store (which checkpoints) and opens it again. */
async function reopen(): Promise<void> {
  await store.close();
  store = await DuckDbStore.open(dir);
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-scrub-'));
  store = await DuckDbStore.open(dir);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('Store.scrub', () => {
  it('leaves no byte of deleted rows in the store file and keeps every other row', async () => {
    await fillStore();
    await reopen();
    await deleteErasedUser();
    await reopen();
    const erasedRows = (COMMITS * ROWS_PER_COMMIT) / ERASED_EVERY;
    const keptRows = COMMITS * ROWS_PER_COMMIT - erasedRows;
    // Deleted and checkpointed, the rows are gone from the tables but not from the file.
    expect(await count('SELECT count(*) FROM interactions WHERE user_id = $1', [ERASED])).toBe(0);
    expect(onDisk(ERASED)).toBe(true);

    const started = performance.now();
    await store.scrub();
    const elapsed = performance.now() - started;

    expect(onDisk(ERASED)).toBe(false);
    expect(existsSync(scrubFileOf(store.file))).toBe(false);
    expect(elapsed).toBeLessThan(10_000);
    expect(await count('SELECT count(*) FROM interactions')).toBe(keptRows);
    expect(await count('SELECT count(DISTINCT seq) FROM interactions')).toBe(keptRows);
    expect(await query('SELECT external_id, attributes FROM users')).toEqual([
      ['kept-user', '{"note":"kept-user"}'],
    ]);
    expect(onDisk('kept-user')).toBe(true);
  });

  it('keeps writes, reads, sequence numbers, keys and the schema working after it', async () => {
    await fillStore();
    await write((rows) => rows.items.set('a', [TENANT, item('a', 'first')]));
    await deleteErasedUser();
    const lastSeq = await count('SELECT max(seq) FROM interactions');
    await store.scrub();

    await write((rows) => rows.interactions.push([TENANT, interaction('after-scrub', 'someone')]));
    expect(await count('SELECT seq FROM interactions WHERE event_id = $1', ['after-scrub'])).toBe(
      lastSeq + 1,
    );
    // Upserts go through the TEMP staging tables and rely on the primary key.
    await write((rows) => rows.items.set('a', [TENANT, item('a', 'second')]));
    expect(await query('SELECT category FROM items')).toEqual([['second']]);
    await expect(
      write((rows) =>
        rows.ops.push(
          sqlOp({
            sql: `INSERT INTO items VALUES ($1, 'a', NULL, '{}', NULL, true, false, 1, 1)`,
            params: [TENANT],
          }),
        ),
      ),
    ).rejects.toThrow(/primary key|duplicate/i);

    // The file opens again as it is, with its schema versions, after the store is closed.
    await reopen();
    expect((await query('SELECT version FROM schema_migrations ORDER BY 1')).flat()).toEqual(
      MIGRATIONS.map((m) => m.version),
    );
    await write((rows) => rows.interactions.push([TENANT, interaction('after-reopen', 'someone')]));
    expect(await count('SELECT seq FROM interactions WHERE event_id = $1', ['after-reopen'])).toBe(
      lastSeq + 2,
    );
    expect(await DuckDbStore.open(dir)).toBe(store);
  });

  it('shares a scrub that has not started yet, and runs it after the writes queued before each call', async () => {
    const rewrite = vi.spyOn(DuckDbStore.prototype as unknown as { rewrite: () => Promise<void> }, 'rewrite');
    await fillStore();
    const first = store.scrub();
    const written = write((rows) => rows.interactions.push([TENANT, interaction('between', ERASED)]));
    const second = store.scrub();
    await Promise.all([first, written, second]);
    expect(rewrite).toHaveBeenCalledTimes(1);
    expect(await count('SELECT count(*) FROM interactions WHERE event_id = $1', ['between'])).toBe(1);
  });

  it('runs once more after a running scrub for calls made meanwhile, and holds new reads until done', async () => {
    const rewrite = vi.spyOn(DuckDbStore.prototype as unknown as { rewrite: () => Promise<void> }, 'rewrite');
    await fillStore();
    // A read in progress holds the first scrub once it has started.
    let release: (() => void) | undefined;
    const held = store.read(() => new Promise<void>((resolve) => (release = resolve)));
    await vi.waitFor(() => expect(release).toBeDefined());
    const order: string[] = [];
    const first = store.scrub().then(() => order.push('first scrub done'));
    await vi.waitFor(() => expect(rewrite).toHaveBeenCalledTimes(1));

    const written = write((rows) => rows.interactions.push([TENANT, interaction('during', 'someone')]));
    const second = store.scrub();
    const third = store.scrub();
    const readDuring = store.read(async () => order.push('read started'));
    release!();
    await Promise.all([held, first, written, second, third, readDuring]);
    expect(rewrite).toHaveBeenCalledTimes(2);
    expect(order).toEqual(['first scrub done', 'read started']);
    expect(await count('SELECT count(*) FROM interactions')).toBe(COMMITS * ROWS_PER_COMMIT + 1);
  });

  it('refuses to scrub a closed store', async () => {
    await store.close();
    await expect(store.scrub()).rejects.toThrow(/closed/);
    store = await DuckDbStore.open(dir);
  });
});

describe('DuckDbStore.open', () => {
  it('removes the copy a scrub that died left, and opens the original intact', async () => {
    await fillStore();
    await store.close();
    const scrubFile = scrubFileOf(store.file);
    writeFileSync(scrubFile, `half a copy with ${ERASED}`);
    writeFileSync(`${scrubFile}.wal`, `a log with ${ERASED}`);

    store = await DuckDbStore.open(dir);
    expect(existsSync(scrubFile)).toBe(false);
    expect(existsSync(`${scrubFile}.wal`)).toBe(false);
    expect(await count('SELECT count(*) FROM interactions')).toBe(COMMITS * ROWS_PER_COMMIT);
  });
});

describe('writeApart and close', () => {
  it('commits statements beside the write queue, all or none, and close waits for one in progress', async () => {
    const read = store.read.bind(store);
    await writeApart(read, [
      { sql: 'CREATE TABLE apart (n INTEGER PRIMARY KEY)', params: [] },
      { sql: 'INSERT INTO apart VALUES ($1), ($2)', params: [1, 2] },
    ]);
    // The second statement fails (a duplicate key): the first is rolled back with it.
    await expect(
      writeApart(read, [
        { sql: 'INSERT INTO apart VALUES ($1)', params: [3] },
        { sql: 'INSERT INTO apart VALUES ($1)', params: [1] },
      ]),
    ).rejects.toThrow();
    const count = () =>
      store.read(async (db) => (await db.runAndReadAll('SELECT count(*) FROM apart')).getRows());
    expect(await count()).toEqual([[2n]]);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const reading = store.read(async (db) => {
      await held;
      return (await db.runAndReadAll('SELECT count(*) FROM apart')).getRows();
    });
    let closed = false;
    const closing = store.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(closed).toBe(false);
    // A read asked once the store is closing does not start on the file being released.
    await expect(store.read(async () => 'started')).rejects.toThrow('the store is closed');
    release();
    expect(await reading).toEqual([[2n]]);
    await closing;
  });
});
