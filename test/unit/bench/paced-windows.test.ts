import { describe, expect, it } from 'vitest';
import { windowFigures } from '../../../bench/support/paced-load.js';

describe('windowFigures (bench/latency: the first seconds after a restart, window by window)', () => {
  // At 10 requests a second, request i is due at i / 10 s: its latency here is i + 1 ms.
  const latencies = Float64Array.from({ length: 50 }, (_, i) => i + 1);

  it('takes each window the requests due in it, from the end of the one before', () => {
    const [first, second, third] = windowFigures(latencies, 10, [1, 2, 5]);
    expect(first).toEqual({ fromS: 0, toS: 1, requests: 10, p50Ms: 5, p99Ms: 10, maxMs: 10 });
    expect(second).toEqual({ fromS: 1, toS: 2, requests: 10, p50Ms: 15, p99Ms: 20, maxMs: 20 });
    expect(third).toMatchObject({ fromS: 2, toS: 5, requests: 30, p50Ms: 35, maxMs: 50 });
  });

  it('counts only the requests sent, in a load stopped early', () => {
    const [first, second] = windowFigures(latencies.subarray(0, 15), 10, [1, 2]);
    expect(first.requests).toBe(10);
    expect(second).toMatchObject({ requests: 5, maxMs: 15 });
    const [, empty] = windowFigures(latencies.subarray(0, 10), 10, [1, 2]);
    expect(empty).toMatchObject({ requests: 0, p99Ms: NaN });
  });
});
