import { describe, expect, it } from 'vitest';
import { DAY_MS, PURCHASE, TYPE_CODES, UserHistory } from '../../../src/state/user-histories.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const event = (item: number, type: number, daysAgo: number) => ({
  item,
  type,
  ts: NOW - daysAgo * DAY_MS,
  weight: 1,
  country: 0,
});

describe('UserHistory', () => {
  it('keeps events in time order even when they arrive out of order', () => {
    const history = new UserHistory();
    for (const daysAgo of [3, 1, 2, 5, 0]) history.add(event(daysAgo, TYPE_CODES.view, daysAgo), NOW);
    expect(Array.from(history.items.subarray(0, history.length))).toEqual([5, 3, 2, 1, 0]);
  });

  it('keeps 30 days of views and 90 days of purchases when it compacts', () => {
    const history = new UserHistory();
    history.add(event(1, TYPE_CODES.view, 40), NOW);
    history.add(event(2, PURCHASE, 60), NOW);
    history.add(event(3, PURCHASE, 100), NOW);
    history.add(event(4, TYPE_CODES.cart, 10), NOW);
    history.compact(NOW);
    expect(Array.from(history.items.subarray(0, history.length)).sort()).toEqual([2, 4]);
    expect([...history.purchasedItems(NOW)]).toEqual([2]);
    expect(history.windowStart(NOW)).toBe(1);
  });

  it('grows past its initial capacity without losing events inside the windows', () => {
    const history = new UserHistory();
    for (let i = 0; i < 1000; i++) history.add(event(i, TYPE_CODES.view, (i % 20) / 10), NOW);
    expect(history.length).toBe(1000);
    const ts = Array.from(history.ts.subarray(0, history.length));
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
  });
});
