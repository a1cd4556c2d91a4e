import { sqlOp } from '../../../src/store/api/ops.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DuckDbStore as Store } from '../../../src/store/database.js';
import { WriteQueueFullError, type Write } from '../../../src/store/write-queue.js';
import {
  closeTempStore,
  openTempStore,
  storedEventIds,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

let store: Store;

function events(...ids: string[]): Write<string[]> {
  return (rows) => {
    for (const id of ids) rows.interactions.push(['t', storedInteraction(id)]);
    return () => ids;
  };
}

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-bound-');
  store = temp.store;
});

afterEach(async () => {
  vi.useRealTimers();
  await closeTempStore(temp);
});

describe('a bounded write queue', () => {
  it('refuses bounded writes while the interactions log holds more rows than it may, until a move', async () => {
    store.writes.setLimit(2);
    // The log's timed move never comes: only a read moves it here.
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    // Twenty times the limit: 40 rows may wait in the log; the 41st refuses the next bounded write.
    const ids = Array.from({ length: 41 }, (_, n) => `e${n}`);
    await store.writes.submit(events(...ids.slice(0, 40)), 1);
    await store.writes.submit(events(ids[40]), 1);
    await expect(store.writes.submit(events('refused'), 1)).rejects.toBeInstanceOf(WriteQueueFullError);
    // A write that is not bounded is taken.
    await store.writes.submit(events('unbounded'));
    // A read moves the log into the store, and bounded writes are taken again.
    expect(await storedEventIds(store)).toHaveLength(42);
    await store.writes.submit(events('after'), 1);
    expect(await storedEventIds(store)).toContain('after');
  });

  it('refuses a write that would take it over its limit, queueing nothing of it', async () => {
    store.writes.setLimit(3);
    const refused: string[] = [];
    const observed = { refused: 0, commits: 0 };
    store.writes.observe({
      committed: () => observed.commits++,
      refused: () => observed.refused++,
      moveFailed: () => undefined,
    });
    const first = store.writes.submit(events('a', 'b'), 2);
    const second = store.writes.submit(events('c'), 1);
    expect(store.writes.depth()).toEqual({ records: 3, writes: 2, limit: 3, logRows: 0 });
    const third = store.writes.submit(events('d'), 1).catch((error: unknown) => {
      expect(error).toBeInstanceOf(WriteQueueFullError);
      expect(error).toMatchObject({ queued: 3, limit: 3 });
      refused.push('d');
    });
    // Writes without a record count (configuration, tenants) are never refused.
    const unbounded = store.writes.submit(events('e'));
    expect(await Promise.all([first, second, third, unbounded])).toEqual([
      ['a', 'b'],
      ['c'],
      undefined,
      ['e'],
    ]);
    expect(refused).toEqual(['d']);
    expect(await storedEventIds(store)).toEqual(['a', 'b', 'c', 'e']);
    expect(store.writes.depth()).toEqual({ records: 0, writes: 0, limit: 3, logRows: 0 });
    expect(observed).toEqual({ refused: 1, commits: 1 });
    // Committed, the records leave room again.
    expect(await store.writes.submit(events('f', 'g', 'h'), 3)).toEqual(['f', 'g', 'h']);
  });

  it('takes a write larger than the limit when the queue is empty', async () => {
    store.writes.setLimit(1);
    expect(await store.writes.submit(events('a', 'b', 'c'), 3)).toEqual(['a', 'b', 'c']);
    expect(await storedEventIds(store)).toEqual(['a', 'b', 'c']);
  });

  it('frees the records of a failed write', async () => {
    store.writes.setLimit(1);
    const failing: Write<never> = (rows) => {
      rows.ops.push(sqlOp({ sql: 'INSERT INTO no_such_table VALUES (1)', params: [] }));
      return () => {
        throw new Error('unreachable');
      };
    };
    await expect(store.writes.submit(failing, 1)).rejects.toThrow();
    expect(store.writes.depth().records).toBe(0);
    expect(await store.writes.submit(events('a'), 1)).toEqual(['a']);
  });
});
