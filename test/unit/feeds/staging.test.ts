import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COLLECT_AFTER_RECORDS, FeedStaging, type StagedRecord } from '../../../src/feeds/staging.js';
import { closeTempStore, openTempStore, type TempStore } from '../../support/temp-store.js';

let temp: TempStore;
beforeEach(async () => (temp = await openTempStore('nextrec-staging-')));
afterEach(() => closeTempStore(temp));

function records(count: number): StagedRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    mapped: true,
    item: { externalId: `p${i}`, category: 'shoes', attributes: { name: `product ${i}` } },
  }));
}

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
