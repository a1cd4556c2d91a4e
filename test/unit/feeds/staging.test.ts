import type { DuckDBConnection } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { COLLECT_AFTER_RECORDS, FeedStaging, type StagedRecord } from '../../../src/feeds/staging.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

let temp: TempStore;
beforeEach(async () => (temp = await openTempStore('nextrec-staging-')));
afterEach(() => closeTempStore(temp));

function records(count: number): StagedRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    mapped: true,
    item: { externalId: `p${i}`, category: 'shoes', attributes: { name: `product ${i}` } },
  }));
}

describe('staging a sync', () => {
  it('appends every page through one appender, closed before the apply', async () => {
    // Each appender holds DuckDB memory until a full garbage collection, so one per page is not made.
    const connection = await temp.store.writes.exclusive(async (c) => c);
    const creating = vi.spyOn(connection, 'createAppender');
    // The write queue makes its own, for the tables it appends to.
    const staged = () => creating.mock.calls.filter(([table]) => table.startsWith('feed_stage')).length;
    const staging = await FeedStaging.create(temp.store, () => undefined);
    const all = records(30);
    await staging.append(all.slice(0, 10));
    expect(staged()).toBe(1);
    const appender = await (creating.mock.results[0].value as ReturnType<DuckDBConnection['createAppender']>);
    const closing = vi.spyOn(appender, 'closeSync');
    await staging.append(all.slice(10, 20));
    // Ingestion commits between pages, on the same connection.
    await temp.store.writes.submit((rows) => {
      rows.interactions.push(['shop', storedInteraction('between-pages')]);
      return () => undefined;
    });
    await staging.append(all.slice(20));
    expect(staged()).toBe(1);
    expect(closing).not.toHaveBeenCalled();
    const applied = await staging.apply('shop', () => undefined);
    expect(closing).toHaveBeenCalledTimes(1);
    expect(applied.upserted).toBe(30);
    await staging.drop();
    expect(closing).toHaveBeenCalledTimes(1);
    const stored = await temp.store.read(
      async (db) =>
        (await db.runAndReadAll("SELECT count(*) FROM items WHERE tenant_id = 'shop'")).getRowsJS()[0][0],
    );
    expect(Number(stored)).toBe(30);
    const events = await temp.store.read(
      async (db) => (await db.runAndReadAll('SELECT count(*) FROM interactions')).getRowsJS()[0][0],
    );
    expect(Number(events)).toBe(1);
  });

  it('says the store was reopened when a scrub replaced the connection its appender was made on', async () => {
    const staging = await FeedStaging.create(temp.store, () => undefined);
    await staging.append(records(5));
    await temp.store.scrub();
    await expect(staging.append(records(5))).rejects.toThrow(
      'the store was reopened while the feed was staged',
    );
    await staging.drop();
  });
});

describe('applying a staged sync', () => {
  it.each([
    [COLLECT_AFTER_RECORDS - 1, 0],
    [COLLECT_AFTER_RECORDS, 1],
  ])(
    'of %i records runs %i full collections before the changed items come into memory',
    async (count, collections) => {
      const order: string[] = [];
      const staging = await FeedStaging.create(temp.store, () => order.push('collected'));
      await staging.append(records(count));
      let changed = 0;
      const applied = await staging.apply('shop', (items) => {
        if (changed === 0) order.push('changed');
        changed += items.length;
      });
      expect(applied.upserted).toBe(count);
      expect(changed).toBe(count);
      expect(order).toEqual([...Array<string>(collections).fill('collected'), 'changed']);
    },
  );
});
