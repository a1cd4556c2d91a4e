import { spawnSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDbStore, eventLogDirOf } from '../../../src/store/database.js';
import { COMPILED_DATABASE, storeDirs } from '../../support/store-dirs.js';
import { storedInteraction } from '../../support/temp-store.js';

const { dataDir, open, close } = storeDirs('nextrec-log-');

function segments(dir: string): string[] {
  return readdirSync(eventLogDirOf(path.join(dir, 'nextrec.duckdb'))).sort();
}

/** Stored interactions: event id, user id, item id, seq, item key, in seq order. */
async function stored(store: DuckDbStore): Promise<unknown[][]> {
  return store.read(
    async (db) =>
      (
        await db.runAndReadAll(
          'SELECT event_id, user_id, item_id, seq::INTEGER, item_key FROM interactions ORDER BY seq',
        )
      ).getRowsJS() as unknown[][],
  );
}

/**
 * Runs a child process that writes `batches` batches of interactions (event ids `<prefix>-<batch>-<n>`)
 * through the store's write queue and is killed with SIGKILL right after the last is acknowledged.
 */
function writeAndDie(
  dir: string,
  prefix: string,
  batches: number,
  perBatch: number,
  fields: Record<string, unknown> = {},
): void {
  const script = `
    const { DuckDbStore } = await import(${JSON.stringify(COMPILED_DATABASE)});
    const store = await DuckDbStore.open(${JSON.stringify(dir)});
    for (let b = 0; b < ${batches}; b++)
      await store.writes.submit((rows) => {
        for (let n = 0; n < ${perBatch}; n++)
          rows.interactions.push(['t', { eventId: '${prefix}-' + b + '-' + n, userId: 'u' + n, sessionId: null,
            itemId: 'item-' + (n % 7), type: 'view', weight: 1, scenarioSlug: null, country: null, ts: n, receivedAt: 1,
            ...${JSON.stringify(fields)} }]);
        return () => undefined;
      });
    process.kill(process.pid, 'SIGKILL');`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(child.signal, child.stderr).toBe('SIGKILL');
}

describe('the interactions log', () => {
  it('acknowledges a batch of interactions from its file, and a read finds them in the store', async () => {
    const dir = dataDir();
    const store = await open(dir);
    await store.writes.submit((rows) => {
      rows.interactions.push(['t', storedInteraction('a')], ['t', storedInteraction('b', { itemId: 'j' })]);
      return () => undefined;
    });
    const [segment] = segments(dir);
    const file = path.join(eventLogDirOf(store.file), segment);
    expect(readFileSync(file, 'utf8').split('\n')).toHaveLength(3);
    expect(await stored(store)).toEqual([
      ['a', 'u', 'i', 1, 0],
      ['b', 'u', 'j', 2, 1],
    ]);
    // Moved in one transaction with the item keys they were first to use; the segment is gone.
    expect(segments(dir)).toEqual([]);
    const keys = await store.read(async (db) =>
      (await db.runAndReadAll('SELECT item_id, item_key FROM item_keys ORDER BY 2')).getRowsJS(),
    );
    expect(keys).toEqual([
      ['i', 0],
      ['j', 1],
    ]);
  });

  it('keeps the rows of a move that fails, tells the observer, and moves them at the next try', async () => {
    const dir = dataDir();
    const store = await open(dir);
    const failures: unknown[] = [];
    store.writes.observe({
      committed: () => undefined,
      refused: () => undefined,
      moveFailed: (e) => failures.push(e),
    });
    await store.writes.submit((rows) => {
      rows.interactions.push(['t', storedInteraction('kept')]);
      return () => undefined;
    });
    const file = path.join(eventLogDirOf(store.file), segments(dir)[0]);
    const whole = readFileSync(file);
    // A line DuckDB's CSV reader refuses (two columns instead of sixteen).
    appendFileSync(file, 'not,a row\n');
    await expect(stored(store)).rejects.toThrow();
    expect(failures).toHaveLength(1);
    expect(store.writes.depth().logRows).toBe(1);
    writeFileSync(file, whole);
    expect(await stored(store)).toEqual([['kept', 'u', 'i', 1, 0]]);
    expect(store.writes.depth().logRows).toBe(0);
  });

  it('keeps every text as it came: quotes, commas, line breaks, empty and absent values', async () => {
    const store = await open(dataDir());
    const odd = ['a,b', 'say "hi"', 'two\nlines', 'cr\rhere', '', 'ünï ✓', '"', ' padded '];
    await store.writes.submit((rows) => {
      odd.forEach((text, n) =>
        rows.interactions.push([
          't',
          storedInteraction(`e${n}`, {
            userId: text,
            sessionId: n % 2 ? null : text,
            country: null,
            recommId: text,
          }),
        ]),
      );
      return () => undefined;
    });
    const rows = await store.read(
      async (db) =>
        (
          await db.runAndReadAll(
            'SELECT user_id, session_id, country, recomm_id FROM interactions ORDER BY seq',
          )
        ).getRowsJS() as unknown[][],
    );
    expect(rows).toEqual(odd.map((text, n) => [text, n % 2 ? null : text, null, text]));
  });

  it('keeps every acknowledged interaction through SIGKILL and moves it at the next start', async () => {
    const dir = dataDir();
    writeAndDie(dir, 'first', 3, 100);
    // The killed process moved nothing: its rows are in the log only.
    expect(segments(dir).length).toBeGreaterThan(0);
    const store = await open(dir);
    expect(segments(dir)).toEqual([]);
    const rows = await stored(store);
    expect(rows).toHaveLength(300);
    expect(rows.map((row) => row[3])).toEqual(rows.map((_, n) => n + 1));
    // Sequence numbers and item keys go on from there.
    await store.writes.submit((rows) => {
      rows.interactions.push(['t', storedInteraction('after', { itemId: 'item-3' })]);
      rows.interactions.push(['t', storedInteraction('new-item', { itemId: 'fresh' })]);
      return () => undefined;
    });
    const last = (await stored(store)).slice(-2);
    expect(last).toEqual([
      ['after', 'u', 'item-3', 301, 3],
      ['new-item', 'u', 'fresh', 302, 7],
    ]);
  });

  it('drops a row cut short by a crash, and does not move a segment the store already holds', async () => {
    const dir = dataDir();
    writeAndDie(dir, 'kept', 1, 10);
    const [segment] = segments(dir);
    const file = path.join(eventLogDirOf(path.join(dir, 'nextrec.duckdb')), segment);
    const whole = readFileSync(file, 'utf8');
    // A write that never finished: half a row, never acknowledged.
    appendFileSync(file, 't,torn,u,,item-1,view,1,,,1');
    const store = await open(dir);
    expect((await stored(store)).map((row) => row[0])).toEqual(
      Array.from({ length: 10 }, (_, n) => `kept-0-${n}`),
    );
    await close(store);
    // The same segment again (as if the process died between the move's commit and the removal).
    writeFileSync(file, whole);
    const reopened = await open(dir);
    expect(await stored(reopened)).toHaveLength(10);
    expect(segments(dir)).toEqual([]);
  });

  it('keeps the amount, price and profit of an acknowledged purchase through SIGKILL', async () => {
    const dir = dataDir();
    writeAndDie(dir, 'paid', 1, 3, { type: 'purchase', amount: 2, price: 19.98, profit: -0.5 });
    const store = await open(dir);
    const rows = await store.read(
      async (db) =>
        (
          await db.runAndReadAll('SELECT type, amount, price, profit FROM interactions ORDER BY seq')
        ).getRowsJS() as unknown[][],
    );
    expect(rows).toEqual(Array.from({ length: 3 }, () => ['purchase', 2, 19.98, -0.5]));
  });

  it('moves a segment an older nextrec left, its lines without amount, price and profit, as NULL', async () => {
    const dir = dataDir();
    writeAndDie(dir, 'old', 1, 4);
    const [segment] = segments(dir);
    const file = path.join(eventLogDirOf(path.join(dir, 'nextrec.duckdb')), segment);
    // The lines as the layout before those three columns wrote them: the same, short of three fields.
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    expect(lines.every((line) => line.endsWith(',,,'))).toBe(true);
    writeFileSync(file, lines.map((line) => `${line.slice(0, -3)}\n`).join(''));
    const store = await open(dir);
    expect((await stored(store)).map((row) => row[0])).toEqual(
      Array.from({ length: 4 }, (_, n) => `old-0-${n}`),
    );
    const prices = await store.read(async (db) =>
      (await db.runAndReadAll('SELECT count(*) FROM interactions WHERE price IS NULL')).getRowsJS(),
    );
    expect(Number(prices[0][0])).toBe(4);
    expect(segments(dir)).toEqual([]);
  });
});
