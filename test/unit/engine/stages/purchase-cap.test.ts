import { describe, expect, it } from 'vitest';
import { applyPurchaseCap } from '../../../../src/engine/stages/purchase-cap.js';
import {
  buildTenant,
  contextOf,
  DAY,
  daysAgo,
  entriesOf,
  NOW,
  poolOf,
  rankIds,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

/**
 * Seed s: neighbours p1 > p2 > p3 > a > b > c > d. buyer purchased p1-p3 60 days ago, late p1 and p2
 * 89 days ago, expired p1 91 days ago, the session sess_42 p1 and p2 yesterday; viewer only viewed p1.
 */
const tenant = buildTenant({
  items: ['s', 'p1', 'p2', 'p3', 'a', 'b', 'c', 'd'],
  events: [
    ...['p1', 'p2', 'p3'].map((id) => ({
      item: id,
      user: 'buyer',
      type: 'purchase' as const,
      ts: daysAgo(60),
    })),
    ...['p1', 'p2'].map((id) => ({ item: id, user: 'late', type: 'purchase' as const, ts: daysAgo(89) })),
    { item: 'p1', user: 'expired', type: 'purchase', ts: daysAgo(91) },
    ...['p1', 'p2'].map((id) => ({
      item: id,
      session: 'sess_42',
      type: 'purchase' as const,
      ts: daysAgo(1),
    })),
    { item: 'p1', user: 'viewer', ts: daysAgo(1) },
  ],
  neighbours: ['p1', 'p2', 'p3', 'a', 'b', 'c', 'd'].map((id, n): [string, string, number] => [
    's',
    id,
    1 - n / 8,
  ]),
  rules: [{ slug: 'no-purchased', type: 'constraint', constraints: { purchasedItemsMaxPercent: 0 } }],
  scenarios: [
    { slug: 'pct0', logicType: 'item-to-item', constraints: { purchasedItemsMaxPercent: 0 } },
    { slug: 'pct50', logicType: 'item-to-item', constraints: { purchasedItemsMaxPercent: 50 } },
    { slug: 'pct5', logicType: 'item-to-item', constraints: { purchasedItemsMaxPercent: 5 } },
    { slug: 'by-rule', logicType: 'item-to-item', rulesSlugs: ['no-purchased'] },
  ],
});

const itemToItem: RequestBody = { logicType: 'item-to-item', itemId: 's' };

describe('stage 9, purchase cap', () => {
  it('without userId the cap is skipped', () => {
    expect(rankIds(tenant, { ...itemToItem, count: 4 })).toEqual(['p1', 'p2', 'p3', 'a']);
  });

  it('default 10%: max(1, floor(N × 10 / 100)) = 1 purchased item stays; the next non-purchased refill', () => {
    expect(rankIds(tenant, { ...itemToItem, userId: 'buyer', count: 4 })).toEqual(['p1', 'a', 'b', 'c']);
    expect(rankIds(tenant, { ...itemToItem, userId: 'buyer' })).toEqual(['p1', 'a', 'b', 'c', 'd']);
  });

  it('floor(N × pct / 100) purchased items stay', () => {
    expect(rankIds(tenant, { scenario: 'pct50', itemId: 's', userId: 'buyer', count: 4 })).toEqual([
      'p1',
      'p2',
      'a',
      'b',
    ]);
  });

  it('at least 1 slot when the percent is above 0', () => {
    expect(rankIds(tenant, { scenario: 'pct5', itemId: 's', userId: 'buyer' })).toEqual([
      'p1',
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  it('0% removes every purchased item', () => {
    expect(rankIds(tenant, { scenario: 'pct0', itemId: 's', userId: 'buyer', count: 4 })).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  it('the percent may come from a constraint rule of the scenario', () => {
    expect(rankIds(tenant, { scenario: 'by-rule', itemId: 's', userId: 'buyer', count: 2 })).toEqual([
      'a',
      'b',
    ]);
  });

  it('only purchases of the last 90 days count', () => {
    expect(rankIds(tenant, { ...itemToItem, userId: 'late', count: 4 })).toEqual(['p1', 'p3', 'a', 'b']);
    expect(rankIds(tenant, { ...itemToItem, userId: 'late', count: 4 }, NOW + 2 * DAY)).toEqual([
      'p1',
      'p2',
      'p3',
      'a',
    ]);
    expect(rankIds(tenant, { ...itemToItem, userId: 'expired', count: 4 })).toEqual(['p1', 'p2', 'p3', 'a']);
  });

  it('other interaction types are not purchases', () => {
    expect(rankIds(tenant, { ...itemToItem, userId: 'viewer', count: 2 })).toEqual(['p1', 'p2']);
  });

  it('a session id sent as userId is capped by its own purchases', () => {
    expect(rankIds(tenant, { ...itemToItem, userId: 'sess_42', count: 3 })).toEqual(['p1', 'p3', 'a']);
  });

  it('applies to user-to-item too', () => {
    // buyer has no 30-day history: the list is the popularity fill (viewer's and sess_42's events first).
    expect(rankIds(tenant, { logicType: 'user-to-item', userId: 'buyer', count: 4 })).toEqual([
      'p1',
      's',
      'a',
      'b',
    ]);
  });

  it('on a pool: purchased entries past the allowance are removed in order', () => {
    const context = contextOf(tenant, { ...itemToItem, userId: 'buyer', count: 10 });
    const pool = poolOf(tenant, [
      ['a', 5],
      ['p2', 4],
      ['b', 3],
      ['p1', 2],
      ['p3', 1],
    ]);
    expect(entriesOf(tenant, applyPurchaseCap(pool, context))).toEqual([
      ['a', 5],
      ['p2', 4],
      ['b', 3],
    ]);
  });
});
