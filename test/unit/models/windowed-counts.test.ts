import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SharedCountsReader, WindowedCounts } from '../../../src/state/windowed-counts.js';

const HOUR = 3_600_000;

describe('WindowedCounts', () => {
  it('counts per item, globally and per country, and forgets events that leave the window', () => {
    const counts = new WindowedCounts(24 * HOUR, true);
    const now = 100 * HOUR;
    counts.add(1, 2, now - 30 * HOUR, now); // already outside: ignored
    counts.add(1, 2, now - 20 * HOUR, now);
    counts.add(1, 3, now - 2 * HOUR, now);
    counts.add(4, 2, now - 1 * HOUR, now);
    counts.add(1, 0, now - 10 * HOUR, now); // late and global: sorted into place
    expect(counts.count(1)).toBe(3);
    expect(counts.globalTotal).toBe(4);
    expect(counts.countryCount(2, 1)).toBe(1);
    expect(counts.countryTotal(2)).toBe(2);

    counts.advance(now + 5 * HOUR); // the -20h event leaves
    expect(counts.count(1)).toBe(2);
    expect(counts.countryCount(2, 1)).toBe(0);
    expect(counts.countryTotal(2)).toBe(1);
    counts.advance(now + 15 * HOUR); // the -10h global event leaves
    expect(counts.count(1)).toBe(1);
    expect(counts.globalTotal).toBe(2);
  });

  it('takes events in any time order without slowing down, and expires them in time order', () => {
    const counts = new WindowedCounts(1000, false);
    const now = 1_000_000;
    // 200,000 events in shuffled time order: a sorted-insert queue would be quadratic here.
    const times = Array.from({ length: 200_000 }, (_, i) => now - (i % 2000));
    for (let i = times.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [times[i], times[j]] = [times[j], times[i]];
    }
    for (const ts of times) counts.add(ts % 3, 0, ts, now);
    expect(counts.globalTotal).toBe(100_100);
    counts.advance(now + 500);
    // Left: ts >= now - 500, i.e. offsets 0..500 of each of the 100 rounds.
    expect(counts.globalTotal).toBe(50_100);
  });

  it('stays exact through queue growth and compaction', () => {
    const counts = new WindowedCounts(1000, false);
    let now = 0;
    for (let i = 0; i < 10_000; i++) {
      now += 1;
      counts.add(i % 7, 0, now, now);
    }
    // Only the last 1000 ms (1001 events, ts >= now - 1000) remain.
    const expected = Array.from({ length: 7 }, (_, item) => {
      let n = 0;
      for (let ts = now - 1000; ts <= now; ts++) if ((ts - 1) % 7 === item) n++;
      return n;
    });
    expect(Array.from({ length: 7 }, (_, item) => counts.count(item))).toEqual(expected);
    expect(counts.globalTotal).toBe(1001);
  });

  it('share their counts with a reader in another thread, through growth, new countries and expiry', async () => {
    const counts = new WindowedCounts(24 * HOUR, true);
    const reader = new SharedCountsReader(24 * HOUR);
    // The reader gets each set of arrays as a message would carry it: shared memory stays shared.
    const { port1, port2 } = new MessageChannel();
    const received: Promise<void>[] = [];
    let deliver: (() => void) | undefined;
    port2.on('message', (shared: Parameters<SharedCountsReader['replace']>[0]) => {
      reader.replace(shared);
      deliver?.();
    });
    const sent = () => new Promise<void>((resolve) => (deliver = resolve));
    received.push(sent());
    counts.share((shared) => port1.postMessage(shared));
    await received.pop();

    const now = 100 * HOUR;
    counts.add(1, 0, now - 20 * HOUR, now);
    // Written after the reader got its arrays, without a message: the memory is the same.
    expect(reader.count(1)).toBe(1);
    expect(reader.globalTotal).toBe(1);

    // Item 500 and country 7 need larger arrays: the reader is sent them.
    received.push(sent());
    counts.add(500, 7, now - 2 * HOUR, now);
    await received.pop();
    expect(reader.count(500)).toBe(1);
    expect(reader.countryCount(7, 500)).toBe(1);
    expect(reader.countryTotal(7)).toBe(1);
    expect(reader.globalTotal).toBe(2);
    expect(reader.version).toBe(counts.version);

    // Only the counting side expires events; the reader sees it at once, and its advance does nothing.
    reader.advance(now + 23 * HOUR);
    expect(reader.count(500)).toBe(1);
    counts.advance(now + 5 * HOUR);
    expect(reader.count(1)).toBe(0);
    expect(reader.countryTotal(7)).toBe(1);
    expect(reader.globalTotal).toBe(1);
    expect(reader.version).toBe(counts.version);
    expect(reader.bytes).toBe(0);
    port1.close();
  });
});
