import fc from 'fast-check';
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  DAY_MS,
  HISTORY_WINDOW_MS,
  PURCHASE,
  PURCHASE_WINDOW_MS,
  SharedHistoriesReader,
  TYPE_CODES,
  UserHistories,
  type HistoryEvent,
  type SharedHistories,
} from '../../../src/state/user-histories.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const event = (item: number, type: number, daysAgo: number, weight = 1) => ({
  item,
  type,
  ts: NOW - daysAgo * DAY_MS,
  weight,
});
/** Adds `e` to the identity's history, now. */
const addTo = (histories: UserHistories, identity: string, e: HistoryEvent) =>
  histories.add(identity, e.item, e.type, e.ts, e.weight, NOW);
const itemsOf = (histories: UserHistories, identity: string) =>
  histories
    .get(identity)!
    .events()
    .map((e) => e.item);

describe('UserHistories', () => {
  it('keeps events in time order even when they arrive out of order', () => {
    const histories = new UserHistories();
    for (const daysAgo of [3, 1, 2, 5, 0]) addTo(histories, 'u', event(daysAgo, TYPE_CODES.view, daysAgo));
    expect(itemsOf(histories, 'u')).toEqual([5, 3, 2, 1, 0]);
  });

  it('drops what left its window (30 days, 90 for purchases) when its slots fill', () => {
    const histories = new UserHistories();
    addTo(histories, 'u', event(1, TYPE_CODES.view, 40));
    addTo(histories, 'u', event(2, PURCHASE, 60));
    addTo(histories, 'u', event(3, PURCHASE, 100));
    addTo(histories, 'u', event(4, TYPE_CODES.cart, 10));
    // Four slots are full: the fifth event makes room by dropping the 40-day view and 100-day purchase.
    addTo(histories, 'u', event(5, TYPE_CODES.view, 1));
    const history = histories.get('u')!;
    expect(itemsOf(histories, 'u')).toEqual([2, 4, 5]);
    expect(histories.events).toBe(3);
    expect([...history.purchasedItems(NOW)]).toEqual([2]);
    expect(history.windowStart(NOW) - history.start).toBe(1);
  });

  it('grows past its first slots without losing events inside the windows', () => {
    const histories = new UserHistories();
    for (let i = 0; i < 1000; i++) addTo(histories, 'u', event(i, TYPE_CODES.view, (i % 20) / 10));
    const ts = histories
      .get('u')!
      .events()
      .map((e) => e.ts);
    expect(ts).toHaveLength(1000);
    expect(ts).toEqual([...ts].sort((a, b) => a - b));
  });

  it('keeps every history whole while they interleave, move, pack and are deleted', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              identity: fc.integer({ min: 0, max: 40 }),
              item: fc.integer({ min: 0, max: 1000 }),
              type: fc.integer({ min: 0, max: 3 }),
              daysAgo: fc.integer({ min: 0, max: 120 }),
              weight: fc.integer({ min: 1, max: 5 }),
            }),
            fc.record({ deleted: fc.integer({ min: 0, max: 40 }) }),
          ),
          { maxLength: 3000, size: 'medium' },
        ),
        (steps) => {
          // Packing from 16 slots on, so that short runs pack too.
          const histories = new UserHistories(16);
          const model = new Map<string, { item: number; type: number; ts: number; weight: number }[]>();
          for (const step of steps) {
            if ('deleted' in step) {
              histories.delete(`u${step.deleted}`);
              model.delete(`u${step.deleted}`);
              continue;
            }
            const e = event(step.item, step.type, step.daysAgo, step.weight);
            const identity = `u${step.identity}`;
            addTo(histories, identity, e);
            const events = model.get(identity) ?? [];
            // Stable: an event goes after those at the same time, as the history inserts it.
            const at = events.findLastIndex((other) => other.ts <= e.ts) + 1;
            events.splice(at, 0, e);
            model.set(identity, events);
          }
          expect(histories.size).toBe(model.size);
          let total = 0;
          for (const [identity, events] of model) {
            const history = histories.get(identity)!;
            const held = history.events();
            total += held.length;
            // What the history still holds are the model's events, minus some of those outside the windows.
            const inside = (e: { type: number; ts: number }) =>
              NOW - e.ts <= (e.type === PURCHASE ? PURCHASE_WINDOW_MS : HISTORY_WINDOW_MS);
            expect(held.filter(inside)).toEqual(events.filter(inside));
            const start = history.windowStart(NOW);
            const { items } = history.columns;
            expect(Array.from(items.subarray(start, history.end))).toEqual(
              events.filter((e) => NOW - e.ts <= HISTORY_WINDOW_MS).map((e) => e.item),
            );
          }
          expect(histories.events).toBe(total);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('packs the slots that moved and deleted histories left', () => {
    const histories = new UserHistories();
    // Interleaved events make every history move as it grows, leaving its old slots behind.
    for (let round = 0; round < 200; round++) {
      for (let user = 0; user < 100; user++) addTo(histories, `u${user}`, event(round, 0, 1));
    }
    for (let user = 0; user < 50; user++) histories.delete(`u${user}`);
    for (let round = 200; round < 300; round++) {
      for (let user = 50; user < 100; user++) addTo(histories, `u${user}`, event(round, 0, 0));
    }
    expect(histories.events).toBe(50 * 300);
    const { used, abandoned } = histories.slots;
    expect(abandoned).toBeLessThanOrEqual(used / 4);
    // Room to grow: at most half again the events per history, and the columns half again the slots.
    expect(used - abandoned).toBeLessThanOrEqual(1.5 * histories.events + 4 * histories.size);
    expect(itemsOf(histories, 'u99').slice(0, 3)).toEqual([0, 1, 2]);
    expect(itemsOf(histories, 'u50').slice(-2)).toEqual([298, 299]);
  });

  it('are read alike by another thread through the memory they share, through growth, packing and deletes', async () => {
    // Packing from 16 slots on, so that short runs pack too.
    const histories = new UserHistories(16);
    const reader = new SharedHistoriesReader();
    // The reader gets each pair of arrays as the ranking thread does: by message, the memory shared.
    const { port1, port2 } = new MessageChannel();
    let delivered: (() => void) | undefined;
    port2.on('message', (message: SharedHistories | 'done') => {
      if (message === 'done') delivered?.();
      else reader.replace(message);
    });
    const allDelivered = () => {
      const done = new Promise<void>((resolve) => (delivered = resolve));
      port1.postMessage('done');
      return done;
    };
    let replaced = 0;
    histories.share((shared) => {
      replaced++;
      port1.postMessage(shared);
    });

    for (let round = 0; round < 30; round++) {
      // Interleaved identities move as they grow; a few arrive out of order and some expire.
      for (let user = 0; user < 60; user++) {
        const daysAgo = round % 7 === 3 ? 100 : ((round * 13 + user) % 5) / 10;
        const identity = `u${user}`;
        reader.bind(identity, addTo(histories, identity, event(round * 100 + user, user % 4, daysAgo)));
      }
      if (round % 10 === 9) {
        for (let user = round; user < round + 5; user++) {
          histories.delete(`u${user}`);
          reader.delete(`u${user}`);
        }
      }
      await allDelivered();
      expect(reader.size).toBe(histories.size);
      for (let user = 0; user < 60; user++) {
        const identity = `u${user}`;
        expect(reader.get(identity)?.events()).toEqual(histories.get(identity)?.events());
        expect(reader.get(identity)?.version).toEqual(histories.get(identity)?.version);
      }
    }
    // The columns grew and were packed: the reader followed new arrays, not only new lengths.
    expect(replaced).toBeGreaterThan(3);
    expect(histories.slots.abandoned).toBeLessThan(histories.slots.used);
    expect(reader.bytes).toBe(0);
    port1.close();
  });
});
