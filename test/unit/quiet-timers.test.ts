import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { QuietTimers, type QuietLimits } from '../../src/quiet-timers.js';

let ran: string[];
let timers: QuietTimers;

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  ran = [];
  timers = new QuietTimers(100, 1_000, (key) => ran.push(key));
});

afterEach(() => {
  timers.clear();
  vi.useRealTimers();
});

/** Touches `key` every `everyMs` for `forMs`, with these limits. */
function touchFor(key: string, forMs: number, limits: QuietLimits = {}, everyMs = 50): void {
  for (let elapsed = 0; elapsed < forMs; elapsed += everyMs) {
    timers.touch(key, limits);
    vi.advanceTimersByTime(everyMs);
  }
}

describe('QuietTimers', () => {
  it('forgets one key without running it, and leaves the others', () => {
    timers.touch('a');
    timers.touch('b');
    timers.forget('a');
    timers.forget('c');
    expect(timers.keys()).toEqual(['b']);
    vi.advanceTimersByTime(1_000);
    expect(ran).toEqual(['b']);
  });

  it('runs a key once, when its calls have paused for the quiet time', () => {
    timers.touch('a');
    vi.advanceTimersByTime(60);
    timers.touch('a');
    vi.advanceTimersByTime(60);
    expect(ran).toEqual([]);
    expect(timers.has('a')).toBe(true);
    vi.advanceTimersByTime(40);
    expect(ran).toEqual(['a']);
    expect(timers.has('a')).toBe(false);
    vi.advanceTimersByTime(1_000);
    expect(ran).toEqual(['a']);
  });

  it('runs a key whose calls never pause once the longest wait is over, and waits anew after', () => {
    touchFor('a', 950);
    expect(ran).toEqual([]);
    touchFor('a', 50);
    expect(ran).toEqual(['a']);
    // The calls after it start another wait.
    touchFor('a', 500);
    expect(ran).toEqual(['a']);
    vi.advanceTimersByTime(100);
    expect(ran).toEqual(['a', 'a']);
  });

  it('keeps each key to its own wait', () => {
    timers.touch('a');
    touchFor('b', 300);
    expect(ran).toEqual(['a']);
    expect(timers.keys()).toEqual(['b']);
    vi.advanceTimersByTime(100);
    expect(ran).toEqual(['a', 'b']);
  });

  it('waits within the limits the last call set: never before its time, at most its longest wait', () => {
    timers.touch('a', { notBefore: Date.now() + 2_000 });
    vi.advanceTimersByTime(1_999);
    expect(ran).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ran).toEqual(['a']);

    // A call that allows it to run sooner than its timer fires makes it run then.
    timers.touch('b', { notBefore: Date.now() + 5_000 });
    vi.advanceTimersByTime(50);
    timers.touch('b', {});
    vi.advanceTimersByTime(100);
    expect(ran).toEqual(['a', 'b']);

    // A longer wait than the timers' own, set by the calls that go on, keeps it waiting.
    touchFor('c', 500);
    touchFor('c', 2_000, { maxWaitMs: 10_000 });
    expect(ran).toEqual(['a', 'b']);
    vi.advanceTimersByTime(100);
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('forgets waiting keys when cleared', () => {
    timers.touch('a');
    timers.clear();
    vi.advanceTimersByTime(5_000);
    expect(ran).toEqual([]);
    expect(timers.has('a')).toBe(false);
  });
});
