import { sqlOp } from '../../../src/store/api/ops.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DuckDbStore } from '../../../src/store/database.js';
import {
  closeTempStore,
  openTempStore,
  storedEventIds,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

let store: DuckDbStore;

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-queue-');
  store = temp.store;
});

afterEach(() => closeTempStore(temp));

describe('WriteQueue', () => {
  it('commits writes queued together in one transaction and answers each after commit', async () => {
    const order: string[] = [];
    const results = await Promise.all(
      ['a', 'b', 'c'].map((id) =>
        store.writes.submit((rows) => {
          rows.interactions.push(['t', storedInteraction(id)]);
          order.push(`build ${id}`);
          return () => {
            order.push(`apply ${id}`);
            return id.toUpperCase();
          };
        }),
      ),
    );
    expect(results).toEqual(['A', 'B', 'C']);
    // All writes were built before any was applied: they shared one commit.
    expect(order).toEqual(['build a', 'build b', 'build c', 'apply a', 'apply b', 'apply c']);
    expect(await storedEventIds(store)).toEqual(['a', 'b', 'c']);
  });

  it('lets later writes of a flush see earlier ones through the scratch space', async () => {
    const seen = await Promise.all(
      [1, 2].map(() =>
        store.writes.submit((_rows, scratch) => {
          const count = ((scratch.get('n') as number) ?? 0) + 1;
          scratch.set('n', count);
          return () => count;
        }),
      ),
    );
    expect(seen).toEqual([1, 2]);
  });

  it('fails only the write whose rows break the commit; its neighbours commit', async () => {
    const outcomes = await Promise.allSettled([
      store.writes.submit((rows) => {
        rows.interactions.push(['t', storedInteraction('ok-1')]);
        return () => 'ok-1';
      }),
      store.writes.submit((rows) => {
        rows.ops.push(sqlOp({ sql: 'INSERT INTO no_such_table VALUES (1)', params: [] }));
        return () => 'broken';
      }),
      store.writes.submit((rows) => {
        rows.interactions.push(['t', storedInteraction('ok-2')]);
        return () => 'ok-2';
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await storedEventIds(store)).toEqual(['ok-1', 'ok-2']);
  });

  it('drops the rows of a write that breaks the appender half-way; later commits store none of them', async () => {
    const outcomes = await Promise.allSettled([
      store.writes.submit((rows) => {
        rows.interactions.push(['t', storedInteraction('ok-1')]);
        return () => 'ok-1';
      }),
      store.writes.submit((rows) => {
        // The second row breaks at its first column, after a whole row was appended.
        rows.interactions.push(
          ['t', storedInteraction('half-1')],
          [null as unknown as string, storedInteraction('x')],
        );
        return () => 'broken';
      }),
      store.writes.submit((rows) => {
        rows.interactions.push(['t', storedInteraction('ok-2')]);
        return () => 'ok-2';
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await store.writes.submit((rows) => {
      rows.interactions.push(['t', storedInteraction('ok-3')]);
      return () => undefined;
    });
    expect(await storedEventIds(store)).toEqual(['ok-1', 'ok-2', 'ok-3']);
  });

  it('keeps its appenders from one flush to the next, and closes them when the store closes', async () => {
    // Each appender holds DuckDB memory until a full garbage collection, so one per flush is not made.
    const connection = await store.writes.exclusive(async (c) => c);
    const creating = vi.spyOn(connection, 'createAppender');
    // Interactions alone are made durable in the interactions log (event-log.ts); an impression beside
    // them takes the batch to the store's appenders.
    const write = (id: string) =>
      store.writes.submit((rows) => {
        rows.interactions.push(['t', storedInteraction(id)]);
        rows.impressions.push([
          't',
          {
            eventId: id,
            userId: 'u',
            itemIds: ['i'],
            scenarioSlug: null,
            country: null,
            recommId: null,
            ts: 1,
            receivedAt: 1,
          },
        ]);
        return () => undefined;
      });
    await write('first');
    const created = creating.mock.calls.length;
    expect(created).toBeGreaterThan(0);
    const appenders = await Promise.all(
      creating.mock.results.map((result) => result.value as ReturnType<DuckDBConnection['createAppender']>),
    );
    const closing = appenders.map((appender) => vi.spyOn(appender, 'closeSync'));
    await write('second');
    expect(creating).toHaveBeenCalledTimes(created);
    for (const spy of closing) expect(spy).not.toHaveBeenCalled();
    expect(await storedEventIds(store)).toEqual(['first', 'second']);
    await store.close();
    for (const spy of closing) expect(spy).toHaveBeenCalledTimes(1);
  });

  it('keeps one instance per file in a process', async () => {
    expect(await DuckDbStore.open(temp.dir)).toBe(store);
  });
});
