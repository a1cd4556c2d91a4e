import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { quantile } from './quantile.js';

/**
 * An open-loop load at a fixed rate: request i is due at start + i / rate and is sent then, whether or not
 * the requests before it were answered, so a stalled server is charged for the requests waiting behind a
 * slow one, in the client's pool for a connection or in the server (no coordinated omission).
 * autocannon's `overallRate` sends each second's requests in a burst instead, which measures the burst,
 * not the server.
 *
 * A request's latency counts from when it was sent. The sending thread wakes on the event loop's timer,
 * whose resolution is a millisecond, so a request goes out up to about 1.5 ms after it was due (`lateP99Ms`
 * reports it, and `fromDueP99Ms` the p99 counted from the due times): counted from the due time, that
 * lateness made up most of the bare route's p99 (2 ms, where its answers took under 1 ms). A timer of
 * finer resolution (a thread sleeping in Atomics.wait that wakes the sender) cost a tenth of a CPU at
 * 1,000 requests a second, taken from the server on this machine.
 */
export interface PacedFigures {
  /** How long the load ran: less than asked for when it was stopped. */
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** How late after their due times the requests were sent, p99. */
  lateP99Ms: number;
  /** p99 of the latencies counted from the due times, that lateness included. */
  fromDueP99Ms: number;
  errors: number;
  non2xx: number;
  /** By window of due times, when `windows` were asked for. */
  windows?: WindowFigures[];
}

/** The requests due in one window of a load's seconds. */
export interface WindowFigures {
  /** Seconds into the load that the window starts and ends at (by the requests' due times). */
  fromS: number;
  toS: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface PacedOptions {
  url: string;
  headers: Record<string, string>;
  paths: readonly string[];
  /** When given, request i POSTs bodies[i % length] to its path; else requests are GETs. */
  bodies?: readonly Buffer[];
  rate: number;
  seconds: number;
  connections: number;
  /** Ends of windows, in seconds into the load (ascending): figures are reported for each apart too. */
  windows?: readonly number[];
}

const THREAD = new URL('./paced-load-thread.js', import.meta.url);
/** Threads that sent a load and wait for the next: their compiled code is warm. */
const idle: Worker[] = [];
/** Tells the load's thread to send no more requests of the load it runs. */
export const STOP = 'stop';

/**
 * The load, sent from a worker thread: its heap holds only loads, so its collections are short, where the
 * benchmark's heap also holds what it generated to load the daemon, and a pause of the thread that sends
 * and reads is charged to every request due or answered meanwhile. A thread is kept for the next load
 * (loads run at once take one each), so that only a benchmark's first load runs on code not compiled yet.
 */
export function runPaced(options: PacedOptions, signal?: AbortSignal): Promise<PacedFigures> {
  const worker = idle.pop() ?? new Worker(THREAD);
  worker.ref();
  return new Promise<PacedFigures>((resolve, reject) => {
    // Aborted, the load ends early: no more requests are sent, and the figures count those that were.
    const stop = () => worker.postMessage(STOP);
    signal?.addEventListener('abort', stop, { once: true });
    const settle = () => {
      signal?.removeEventListener('abort', stop);
      worker.off('message', answered);
      worker.off('error', reject);
      worker.off('exit', exited);
    };
    const answered = (figures: PacedFigures) => {
      settle();
      // An idle thread does not keep the benchmark's process alive.
      worker.unref();
      idle.push(worker);
      resolve(figures);
    };
    const exited = (code: number) => {
      settle();
      reject(new Error(`the load's thread exited with code ${code}`));
    };
    worker.on('message', answered);
    worker.once('error', reject);
    worker.once('exit', exited);
    worker.postMessage(options);
  });
}

/** How many requests of an open-loop load at `rate` a second are due `elapsedMs` after its start. */
export function dueCount(elapsedMs: number, rate: number, total: number): number {
  if (elapsedMs < 0) return 0;
  // Request i is due at i / rate seconds: the first at the start.
  return Math.min(total, Math.floor((elapsedMs * rate) / 1000) + 1);
}

/**
 * Calls `send(i, dueAt)` for requests 0 to `total - 1` of a load at `rate` a second, each when it is due
 * (performance.now() times, `dueAt` included), whether or not the requests before it were answered;
 * stops sending when `stopped()`, and resolves once every request sent was settled, with the start
 * and how many were sent.
 */
export async function paceRequests(
  rate: number,
  total: number,
  stopped: () => boolean,
  send: (index: number, dueAt: number) => Promise<void>,
): Promise<{ start: number; sent: number }> {
  // Only the requests not answered yet: a load of 300,000 requests kept each one's settled promise until
  // its end, and the thread's collections of them were charged to the requests answered meanwhile.
  const inFlight = new Set<Promise<void>>();
  const start = performance.now() + 50;
  let sent = 0;
  while (sent < total && !stopped()) {
    // Everything due by now goes out; then wait about a millisecond for the next ones.
    for (const due = dueCount(performance.now() - start, rate, total); sent < due;) {
      const index = sent++;
      const request = send(index, start + (index * 1000) / rate).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  return { start, sent };
}

/** The load, sent from this thread (paced-load-thread.ts runs it): all of it, or until `stopped()`. */
export async function sendPaced(options: PacedOptions, stopped: () => boolean): Promise<PacedFigures> {
  const { bodies } = options;
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1 });
  const total = Math.round(options.rate * options.seconds);
  const latencies = new Float64Array(total);
  const lateness = new Float64Array(total);
  let errors = 0;
  let non2xx = 0;
  const { start, sent } = await paceRequests(options.rate, total, stopped, (index, dueAt) => {
    const sentAt = performance.now();
    lateness[index] = sentAt - dueAt;
    return pool
      .request({
        method: bodies ? 'POST' : 'GET',
        path: options.paths[index % options.paths.length],
        headers: options.headers,
        body: bodies?.[index % bodies.length],
      })
      .then(async (response) => {
        await response.body.dump();
        if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
        latencies[index] = performance.now() - sentAt;
      })
      .catch(() => {
        errors++;
        latencies[index] = performance.now() - sentAt;
      });
  }).finally(() => pool.close());
  const elapsedS = (performance.now() - start) / 1000;
  const at = quantiles(latencies.subarray(0, sent));
  const lateP99Ms = quantiles(lateness.subarray(0, sent))(0.99);
  const fromDueP99Ms = quantiles(latencies.subarray(0, sent).map((latency, i) => latency + lateness[i]))(
    0.99,
  );
  return {
    seconds: elapsedS,
    rps: sent / elapsedS,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    p999Ms: at(0.999),
    lateP99Ms,
    fromDueP99Ms,
    errors,
    non2xx,
    windows: options.windows && windowFigures(latencies.subarray(0, sent), options.rate, options.windows),
  };
}

/** The figures of the requests due in each window: from the end of the one before (or 0) to its end. */
export function windowFigures(
  latencies: Float64Array,
  rate: number,
  ends: readonly number[],
): WindowFigures[] {
  return ends.map((toS, i) => {
    const fromS = i === 0 ? 0 : ends[i - 1];
    // Request i is due i / rate seconds into the load.
    const window = latencies.subarray(
      Math.min(latencies.length, Math.ceil(fromS * rate)),
      Math.min(latencies.length, Math.ceil(toS * rate)),
    );
    const at = quantiles(window);
    const empty = window.length === 0;
    return {
      fromS,
      toS,
      requests: window.length,
      p50Ms: empty ? NaN : at(0.5),
      p99Ms: empty ? NaN : at(0.99),
      maxMs: empty ? NaN : at(1),
    };
  });
}

/** The quantiles of `values`, in ms to two decimals. */
function quantiles(values: Float64Array): (q: number) => number {
  const sorted = values.slice().sort();
  return (q) => Number(quantile(sorted, q).toFixed(2));
}
