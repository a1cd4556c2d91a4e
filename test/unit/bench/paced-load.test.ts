import { describe, expect, it } from 'vitest';
import { dueCount, paceRequests } from '../../../bench/support/paced-load.js';

describe('dueCount (open-loop schedule)', () => {
  it('has request i due at i / rate seconds, the first at the start', () => {
    expect(dueCount(-1, 300, 1000)).toBe(0);
    expect(dueCount(0, 300, 1000)).toBe(1);
    expect(dueCount(3.3, 300, 1000)).toBe(1);
    expect(dueCount(10 / 3, 300, 1000)).toBe(2);
    expect(dueCount(1000, 300, 1000)).toBe(301);
  });

  it('never exceeds the load', () => {
    expect(dueCount(60_000, 300, 1000)).toBe(1000);
  });
});

describe('paceRequests', () => {
  it('sends every request at or after its due time, whether or not the ones before were answered', async () => {
    const sent: { index: number; dueAt: number; at: number }[] = [];
    let answered = 0;
    const result = await paceRequests(
      1000,
      40,
      () => false,
      (index, dueAt) => {
        sent.push({ index, dueAt, at: performance.now() });
        // No answer before every request was sent: an open loop does not wait for it.
        return new Promise<void>((resolve) => setTimeout(resolve, 80)).then(() => void answered++);
      },
    );
    expect(result.sent).toBe(40);
    expect(answered).toBe(40);
    expect(sent.map((s) => s.index)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    for (const s of sent) {
      expect(s.dueAt).toBeCloseTo(result.start + s.index, 6);
      expect(s.at).toBeGreaterThanOrEqual(s.dueAt);
    }
  });

  it('sends no more once stopped, and waits for those sent', async () => {
    let calls = 0;
    let settled = 0;
    const result = await paceRequests(
      1000,
      1000,
      () => calls >= 5,
      () => {
        calls++;
        return new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => void settled++);
      },
    );
    expect(result.sent).toBe(calls);
    expect(calls).toBeLessThan(1000);
    expect(settled).toBe(calls);
  });
});
