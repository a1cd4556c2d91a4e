import { quantile } from './quantile.js';

/** p50, p99 and p99.9 of some requests' latencies, in ms to two decimals, their count and the longest. */
export interface LatencyFigures {
  count: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

export function latencyFigures(latencies: ArrayLike<number>): LatencyFigures {
  const sorted = Float64Array.from(latencies).sort();
  if (sorted.length === 0) return { count: 0, p50Ms: 0, p99Ms: 0, p999Ms: 0, maxMs: 0 };
  const at = (q: number) => Number(quantile(sorted, q).toFixed(2));
  return {
    count: sorted.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    maxMs: Number(sorted[sorted.length - 1].toFixed(2)),
  };
}

/** An open-loop load's requests, by index: when each was due (ms after the start) and how long it took. */
export interface Answers {
  dueMs: ArrayLike<number>;
  latencyMs: ArrayLike<number>;
  /** 1 for a write, 0 for a recommendation. */
  write: ArrayLike<number>;
  /** How many of the arrays' entries count. */
  count: number;
}

export interface LatencyWindow {
  /** The window holds the requests due from `startS` on, for the window's length. */
  startS: number;
  all: LatencyFigures;
  recommendations: LatencyFigures;
  writes: LatencyFigures;
}

/** The figures of each `windowMs` of the load, by the time each request was due. */
export function latencyWindows(answers: Answers, windowMs: number): LatencyWindow[] {
  const byWindow: { all: number[]; recommendations: number[]; writes: number[] }[] = [];
  for (let i = 0; i < answers.count; i++) {
    const w = Math.floor(answers.dueMs[i] / windowMs);
    while (byWindow.length <= w) byWindow.push({ all: [], recommendations: [], writes: [] });
    const latency = answers.latencyMs[i];
    byWindow[w].all.push(latency);
    (answers.write[i] ? byWindow[w].writes : byWindow[w].recommendations).push(latency);
  }
  return byWindow.map((window, w) => ({
    startS: (w * windowMs) / 1000,
    all: latencyFigures(window.all),
    recommendations: latencyFigures(window.recommendations),
    writes: latencyFigures(window.writes),
  }));
}

/** The windows from `fromS` on whose p99 (of all requests) is over `targetMs`. */
export function windowsOver(
  windows: readonly LatencyWindow[],
  fromS: number,
  targetMs: number,
): LatencyWindow[] {
  return windows.filter((window) => window.startS >= fromS && window.all.p99Ms > targetMs);
}

/** The median of `values` (the lower of the middle two), or 0 of none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[(sorted.length - 1) >> 1];
}

/**
 * How fast `value` grew, per minute, over the samples taken from `fromS` on: the slope of the least-squares
 * line through them, so that one sample (a collection just before it, or just after) does not decide.
 */
export function growthPerMinute(samples: readonly { s: number; value: number }[], fromS: number): number {
  const points = samples.filter((sample) => sample.s >= fromS);
  if (points.length < 2) return 0;
  const meanS = points.reduce((sum, p) => sum + p.s, 0) / points.length;
  const meanValue = points.reduce((sum, p) => sum + p.value, 0) / points.length;
  let covariance = 0;
  let variance = 0;
  for (const p of points) {
    covariance += (p.s - meanS) * (p.value - meanValue);
    variance += (p.s - meanS) ** 2;
  }
  return variance === 0 ? 0 : (covariance / variance) * 60;
}
