import { sqlOp } from '../../../src/store/api/ops.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../../src/store/database.js';
import { identityHash } from '../../../src/store/identity-hash.js';
import type { StoredImpression } from '../../../src/store/rows.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-item-keys-');
});

afterEach(() => closeTempStore(temp));

function impression(itemIds: string[]): StoredImpression {
  return {
    eventId: null,
    userId: 'u',
    itemIds,
    scenarioSlug: 'home',
    country: null,
    recommId: null,
    ts: 1,
    receivedAt: 1,
  };
}

/** Writes interactions of `items` and one impression of `shown` for `tenantId` in one commit. */
function write(store: DuckDbStore, tenantId: string, items: string[], shown: string[] = []) {
  return store.writes.submit((rows) => {
    items.forEach((itemId, i) =>
      rows.interactions.push([tenantId, storedInteraction(`${itemId}${i}`, { itemId })]),
    );
    if (shown.length) rows.impressions.push([tenantId, impression(shown)]);
    return () => undefined;
  });
}

async function query(store: DuckDbStore, sql: string): Promise<unknown[][]> {
  return store.read(async (db) => (await db.runAndReadAll(sql)).getRowsJS());
}

describe('item keys', () => {
  it('are given per tenant as events first name items, and stored with them', async () => {
    await write(temp.store, 't', ['a', 'b', 'a'], ['c', 'b']);
    await write(temp.store, 'other', ['b']);
    expect(
      await query(temp.store, 'SELECT tenant_id, item_id, item_key FROM item_keys ORDER BY ALL'),
    ).toEqual([
      ['other', 'b', 0],
      ['t', 'a', 0],
      ['t', 'b', 1],
      ['t', 'c', 2],
    ]);
    expect(
      await query(temp.store, 'SELECT item_id, item_key, identity_hash FROM interactions ORDER BY seq'),
    ).toEqual([
      ['a', 0, identityHash('u')],
      ['b', 1, identityHash('u')],
      ['a', 0, identityHash('u')],
      ['b', 0, identityHash('u')],
    ]);
    expect(await query(temp.store, 'SELECT item_ids, item_keys FROM impressions')).toEqual([
      [
        ['c', 'b'],
        [2, 1],
      ],
    ]);
  });

  it('keep tenants apart when one commit interleaves their events', async () => {
    await temp.store.writes.submit((rows) => {
      for (const [tenantId, itemId] of [
        ['t', 'a'],
        ['other', 'a'],
        ['t', 'b'],
        ['other', 'c'],
        ['t', 'a'],
      ])
        rows.interactions.push([
          tenantId,
          storedInteraction(`${tenantId}-${rows.interactions.length}`, { itemId }),
        ]);
      return () => undefined;
    });
    expect(
      await query(temp.store, 'SELECT tenant_id, item_id, item_key FROM interactions ORDER BY seq'),
    ).toEqual([
      ['t', 'a', 0],
      ['other', 'a', 0],
      ['t', 'b', 1],
      ['other', 'c', 1],
      ['t', 'a', 0],
    ]);
  });

  it('are read back when the store opens again, and new items continue from them', async () => {
    await write(temp.store, 't', ['a', 'b']);
    await temp.store.close();
    temp.store = await DuckDbStore.open(temp.dir);
    await write(temp.store, 't', ['b', 'c']);
    expect(await query(temp.store, 'SELECT item_id, item_key FROM item_keys ORDER BY item_key')).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
    ]);
  });

  it('given in a transaction that rolled back are given again', async () => {
    const broken = temp.store.writes.submit((rows) => {
      rows.interactions.push(['t', storedInteraction('lost', { itemId: 'lost' })]);
      rows.ops.push(sqlOp({ sql: 'INSERT INTO no_such_table VALUES (1)', params: [] }));
      return () => undefined;
    });
    await expect(broken).rejects.toThrow();
    await write(temp.store, 't', ['kept']);
    expect(await query(temp.store, 'SELECT item_id, item_key FROM item_keys')).toEqual([['kept', 0]]);
    expect(await query(temp.store, 'SELECT item_id, item_key FROM interactions')).toEqual([['kept', 0]]);
  });
});
