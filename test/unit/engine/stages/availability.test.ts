import { describe, expect, it } from 'vitest';
import { availability } from '../../../../src/engine/stages/availability.js';
import {
  buildTenant,
  contextOf,
  daysAgo,
  entriesOf,
  item,
  poolOf,
  rankIds,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

/**
 * h, ok and gone share category x; gone is unavailable; ghost exists only in events (never upserted).
 * h's neighbours are gone and ghost (best) then ok. User u viewed h, ghost, gone, ok in that order;
 * user v viewed h only.
 */
const tenant = buildTenant({
  items: [
    item('h', { category: 'x' }),
    item('ok', { category: 'x' }),
    item('gone', { category: 'x', available: false }),
  ],
  events: [
    { item: 'h', user: 'u', ts: daysAgo(4) },
    { item: 'ghost', user: 'u', ts: daysAgo(3) },
    { item: 'gone', user: 'u', ts: daysAgo(2) },
    { item: 'ok', user: 'u', ts: daysAgo(1) },
    { item: 'h', user: 'v', ts: daysAgo(1) },
  ],
  neighbours: [
    ['h', 'gone', 0.5],
    ['h', 'ghost', 0.5],
    ['h', 'ok', 0.25],
  ],
});

describe('stage 3, availability', () => {
  it('drops unavailable items and items known only from events, keeping the order', () => {
    const pool = poolOf(tenant, [
      ['gone', 4],
      ['ok', 3],
      ['ghost', 2],
      ['h', 1],
    ]);
    expect(
      entriesOf(tenant, availability(pool, contextOf(tenant, { logicType: 'item-to-item', itemId: 'h' }))),
    ).toEqual([
      ['ok', 3],
      ['h', 1],
    ]);
  });

  it.each<[string, RequestBody, string[]]>([
    ['user-to-item', { logicType: 'user-to-item', userId: 'v' }, ['ok', 'h']],
    ['item-to-item', { logicType: 'item-to-item', itemId: 'h' }, ['ok']],
    ['items-to-items', { logicType: 'items-to-items', itemIds: ['h', 'ghost'] }, ['ok']],
    ['similar-products', { logicType: 'similar-products', itemId: 'h' }, ['ok']],
    ['recently-viewed', { logicType: 'recently-viewed', userId: 'u' }, ['ok', 'h']],
  ])('%s never returns an unavailable or event-only item', (_logicType, body, expected) => {
    expect(rankIds(tenant, body)).toEqual(expected);
  });
});
