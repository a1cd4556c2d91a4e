import { describe, expect, it } from 'vitest';
import {
  growthPerMinute,
  latencyFigures,
  latencyWindows,
  median,
  windowsOver,
} from '../../../bench/support/latency-windows.js';

describe('latencyFigures', () => {
  it('gives the nearest-rank p50, p99 and p99.9, the count and the longest', () => {
    const latencies = Array.from({ length: 1000 }, (_, i) => 1000 - i);
    expect(latencyFigures(latencies)).toEqual({
      count: 1000,
      p50Ms: 500,
      p99Ms: 990,
      p999Ms: 999,
      maxMs: 1000,
    });
  });

  it('is all zeros for no requests', () => {
    expect(latencyFigures([])).toEqual({ count: 0, p50Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 });
  });
});

describe('latencyWindows', () => {
  // 10 requests a second for 3 s: the slow ones are due in the second second, and are writes.
  const dueMs = Array.from({ length: 30 }, (_, i) => i * 100);
  const latencyMs = dueMs.map((due) => (due >= 1000 && due < 2000 ? 50 : 1));
  const write = dueMs.map((due) => (due >= 1000 && due < 2000 && due % 200 === 0 ? 1 : 0));
  const windows = latencyWindows({ dueMs, latencyMs, write, count: 30 }, 1000);

  it('puts each request in the window it was due in, whenever it was answered', () => {
    expect(windows.map((w) => w.startS)).toEqual([0, 1, 2]);
    expect(windows.map((w) => w.all.count)).toEqual([10, 10, 10]);
    expect(windows.map((w) => w.all.p99Ms)).toEqual([1, 50, 1]);
  });

  it('tells recommendations from writes', () => {
    expect(windows[1].writes.count).toBe(5);
    expect(windows[1].recommendations.count).toBe(5);
    expect(windows[0].writes.count).toBe(0);
    expect(windows[0].recommendations.p50Ms).toBe(1);
  });

  it('counts only the first `count` requests', () => {
    expect(latencyWindows({ dueMs, latencyMs, write, count: 12 }, 1000).map((w) => w.all.count)).toEqual([
      10, 2,
    ]);
  });

  it('names the windows from a time on whose p99 is over the target', () => {
    expect(windowsOver(windows, 0, 10).map((w) => w.startS)).toEqual([1]);
    expect(windowsOver(windows, 2, 10)).toEqual([]);
    expect(windowsOver(windows, 0, 50)).toEqual([]);
  });
});

describe('median', () => {
  it('is the middle value, the lower of two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
    expect(median([])).toBe(0);
  });
});

describe('growthPerMinute', () => {
  it('is the slope, per minute, of the samples from a time on', () => {
    // Flat for a minute, then 2 a minute.
    const samples = Array.from({ length: 13 }, (_, i) => ({
      s: i * 10,
      value: i <= 6 ? 100 : 100 + (i - 6) / 3,
    }));
    expect(growthPerMinute(samples, 60)).toBeCloseTo(2, 10);
    expect(growthPerMinute(samples, 0)).toBeGreaterThan(0);
    expect(growthPerMinute(samples, 0)).toBeLessThan(2);
  });

  it('is not decided by one sample: a spike in the middle leaves the slope at 0', () => {
    const samples = Array.from({ length: 11 }, (_, i) => ({ s: i * 10, value: i === 5 ? 200 : 100 }));
    expect(growthPerMinute(samples, 0)).toBeCloseTo(0, 10);
  });

  it('is 0 with fewer than two samples', () => {
    expect(growthPerMinute([{ s: 10, value: 5 }], 0)).toBe(0);
  });
});
