import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DuckDBConnection } from '@duckdb/node-api';
import { duckDbMemory } from '../../../src/store/duckdb-memory.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-release-');
});

afterEach(() => closeTempStore(temp));

/** What DuckDB holds of tables (pages of the file, rows not checkpointed yet), in bytes. */
async function tableMemory(db: DuckDBConnection): Promise<number> {
  const { memory } = await duckDbMemory(db);
  return (memory.BASE_TABLE ?? 0) + (memory.IN_MEMORY_TABLE ?? 0);
}

/** Stores `count` interactions, 5,000 a flush. */
async function writeInteractions(count: number): Promise<void> {
  for (let start = 0; start < count; start += 5_000)
    await temp.store.writes.submit((rows) => {
      for (let n = start; n < Math.min(count, start + 5_000); n++)
        rows.interactions.push([
          't',
          storedInteraction(`e${n}`, { userId: `u${n % 977}`, itemId: `i${n % 5_003}`, ts: n }),
        ]);
      return () => undefined;
    });
}

async function memoryLimit(db: DuckDBConnection): Promise<string> {
  const result = await db.runAndReadAll(`SELECT current_setting('memory_limit')`);
  return String(result.getRows()[0][0]);
}

describe('Store.releaseCache', () => {
  it("gives back the pages DuckDB cached, keeps every row and restores the store's memory limit", async () => {
    const { store } = temp;
    await writeInteractions(250_000);
    // Checkpointed, then read: the pages are cached, none of it is rows waiting for a checkpoint.
    await store.writes.exclusive((db) => db.run('CHECKPOINT'));
    const before = await store.read(async (db) => {
      await db.runAndReadAll(
        'SELECT count(DISTINCT (event_id, user_id, item_id, ts, received_at)) FROM interactions',
      );
      return { memory: await tableMemory(db), limit: await memoryLimit(db) };
    });
    // Well above what eviction may leave (the store's 1MB limit for a moment, see Store.releaseCache).
    expect(before.memory).toBeGreaterThan(4 * 1024 * 1024);

    await store.releaseCache(0);
    const after = await store.read(async (db) => ({
      memory: await tableMemory(db),
      limit: await memoryLimit(db),
    }));
    expect(after.memory).toBeLessThan(before.memory / 4);
    expect(after.limit).toBe(before.limit);
    // Counting reads pages of the table again, so it comes after.
    const counted = await store.read(async (db) =>
      Number((await db.runAndReadAll('SELECT count(*) FROM interactions')).getRows()[0][0]),
    );
    expect(counted).toBe(250_000);
    // Writes go on as before.
    await store.writes.submit((rows) => {
      rows.interactions.push(['t', storedInteraction('last')]);
      return () => undefined;
    });
    const total = await store.read(async (db) =>
      Number((await db.runAndReadAll('SELECT count(*) FROM interactions')).getRows()[0][0]),
    );
    expect(total).toBe(250_001);
  });

  it('only checkpoints while a TEMP table holds rows (a feed sync staging), which eviction would spill', async () => {
    const { store } = temp;
    await writeInteractions(50_000);
    await store.writes.exclusive(async (db) => {
      await db.run('CHECKPOINT');
      await db.run(
        `CREATE TEMP TABLE staged AS SELECT 'item-' || i AS id, repeat('x', 100) AS page FROM range(50000) t(i)`,
      );
    });
    const cached = () =>
      store.read(async (db) => {
        await db.runAndReadAll('SELECT count(DISTINCT (event_id, user_id, item_id, ts)) FROM interactions');
        const { memory } = await duckDbMemory(db);
        return memory.BASE_TABLE ?? 0;
      });
    const pages = await cached();
    expect(pages).toBeGreaterThan(1024 * 1024);
    await store.releaseCache(0);
    const kept = await store.read(async (db) => tableMemory(db));
    expect(kept).toBeGreaterThan(pages);
    await store.writes.exclusive((db) => db.run('DROP TABLE temp.staged'));
    await cached();
    await store.releaseCache(0);
    expect(await store.read(async (db) => tableMemory(db))).toBeLessThan(pages / 2);
  });

  it('leaves the pages while a read runs, without waiting for it, and when they are too few', async () => {
    const { store } = temp;
    await writeInteractions(50_000);
    await store.writes.exclusive((db) => db.run('CHECKPOINT'));
    const pages = () =>
      store.read(async (db) => {
        await db.runAndReadAll('SELECT count(DISTINCT (event_id, user_id, item_id, ts)) FROM interactions');
        return tableMemory(db);
      });
    const cached = await pages();
    expect(cached).toBeGreaterThan(1024 * 1024);
    let finish!: () => void;
    let started!: () => void;
    const reading = new Promise<void>((resolve) => (started = resolve));
    const running = store.read(() => {
      started();
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await reading;
    await store.releaseCache(0);
    finish();
    await running;
    expect(await store.read(tableMemory)).toBeGreaterThanOrEqual(cached);
    // Fewer bytes of pages than asked for.
    await store.releaseCache(cached + 1);
    expect(await store.read(tableMemory)).toBeGreaterThanOrEqual(cached);
    await store.releaseCache(cached);
    expect(await store.read(tableMemory)).toBeLessThan(cached / 2);
  });

  it('does nothing once the store is closed', async () => {
    await temp.store.close();
    await expect(temp.store.releaseCache()).resolves.toBeUndefined();
  });
});
