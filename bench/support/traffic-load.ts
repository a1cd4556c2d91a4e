import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { paceRequests } from './paced-load.js';
import { quantile } from './quantile.js';
import { isWrite, shopTraffic, TRAFFIC_KINDS, type ShopRequest } from './shop-traffic.js';

/**
 * A shop's traffic (shop-traffic.ts) at a fixed rate, open-loop (paced-load.ts): request i is due at
 * start + i / rate and sent then, whether or not the requests before it were answered. Its latency counts
 * from that due time, so that the requests that queue behind a slow one, in the client's pool or in the
 * server, are charged for the wait. Sent from a worker thread of its own, which reports what was answered
 * every `reportEveryMs`, so that the benchmark's thread can sample the server meanwhile.
 */
export interface TrafficOptions {
  url: string;
  /** The tenant's credentials. */
  headers: Record<string, string>;
  itemIds: readonly string[];
  userIds: readonly string[];
  rate: number;
  seconds: number;
  connections: number;
  reportEveryMs: number;
}

/** Requests answered since the last report, by index. */
export interface AnsweredRequests {
  index: Uint32Array;
  /** From the due time to the end of the answer. */
  latencyMs: Float64Array;
  /** Index into TRAFFIC_KINDS. */
  kind: Uint8Array;
  /** The HTTP status, or 0 where the request failed without one. */
  status: Uint16Array;
  /** Single-event interactions answered `{ accepted: 1 }`. */
  acknowledgedEvents: number;
  /** Ingestion answers of status 200 that did not count what was sent. */
  miscounted: number;
  /** What the first answer other than 200 said, or why a request failed. */
  firstFailure?: string;
}

export interface TrafficEnd {
  /** When request 0 was due, on the epoch clock (ms). */
  startedAt: number;
  sent: number;
  /** How late after its due time each request went out, p99 (the sender's timer ticks by the ms). */
  lateP99Ms: number;
}

export type TrafficMessage =
  | { type: 'started'; startedAt: number }
  | { type: 'answered'; answered: AnsweredRequests }
  | { type: 'end'; end: TrafficEnd };

/** What the benchmark's thread is told as the traffic goes. */
export interface TrafficListener {
  /** Request 0 is due at `startedAt` (epoch ms). */
  started?(startedAt: number): void;
  answered(answered: AnsweredRequests): void;
}

const THREAD = new URL('./traffic-load-thread.js', import.meta.url);
export const STOP = 'stop';

/**
 * Sends the traffic from a thread of its own, telling `listener` as it goes. Aborted, no more requests
 * are sent and it resolves once those sent were answered.
 */
export function runTraffic(
  options: TrafficOptions,
  listener: TrafficListener,
  signal?: AbortSignal,
): Promise<TrafficEnd> {
  const worker = new Worker(THREAD);
  const stop = () => worker.postMessage(STOP);
  signal?.addEventListener('abort', stop, { once: true });
  return new Promise<TrafficEnd>((resolve, reject) => {
    worker.on('message', (message: TrafficMessage) => {
      if (message.type === 'started') listener.started?.(message.startedAt);
      else if (message.type === 'answered') listener.answered(message.answered);
      else resolve(message.end);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the traffic's thread exited with code ${code}`)));
    worker.postMessage(options);
  }).finally(() => {
    signal?.removeEventListener('abort', stop);
    void worker.terminate();
  });
}

/** The traffic, sent from this thread (traffic-load-thread.ts runs it), reported to `report`. */
export async function sendTraffic(
  options: TrafficOptions,
  stopped: () => boolean,
  report: (message: TrafficMessage) => void,
): Promise<void> {
  const next = shopTraffic(options.itemIds, options.userIds);
  const pool = new Pool(options.url, { connections: options.connections, pipelining: 1 });
  const json = { ...options.headers, 'content-type': 'application/json' };
  const total = Math.round(options.rate * options.seconds);
  const lateness = new Float64Array(total);
  let pending = newReport();
  const flush = () => {
    report({ type: 'answered', answered: toArrays(pending) });
    pending = newReport();
  };
  const timer = setInterval(flush, options.reportEveryMs);
  let startedAt = 0;

  const send = (index: number, dueAt: number) => {
    if (index === 0) {
      startedAt = performance.timeOrigin + dueAt;
      report({ type: 'started', startedAt });
    }
    lateness[index] = performance.now() - dueAt;
    const request = next();
    const answered = (status: number, failure?: string) => {
      pending.index.push(index);
      pending.latencyMs.push(performance.now() - dueAt);
      pending.kind.push(TRAFFIC_KINDS.indexOf(request.kind));
      pending.status.push(status);
      if (failure !== undefined) pending.firstFailure ??= `${request.method} ${request.path}: ${failure}`;
    };
    return pool
      .request({
        method: request.method,
        path: request.path,
        headers: request.body === undefined ? options.headers : json,
        body: request.body,
      })
      .then(async (response) => {
        if (response.statusCode !== 200) {
          answered(
            response.statusCode,
            `HTTP ${response.statusCode} ${(await response.body.text()).slice(0, 300)}`,
          );
          return;
        }
        if (!isWrite(request.kind)) {
          await response.body.dump();
        } else if (countsOne(request, await response.body.json())) {
          if (request.kind === 'interaction') pending.acknowledgedEvents++;
        } else {
          pending.miscounted++;
        }
        answered(200);
      })
      .catch((error: unknown) => answered(0, String(error)));
  };
  let sent: number;
  try {
    ({ sent } = await paceRequests(options.rate, total, stopped, send));
  } finally {
    clearInterval(timer);
    await pool.close();
  }
  flush();
  const lateP99Ms = Number(quantile(lateness.subarray(0, sent).sort(), 0.99).toFixed(2));
  report({ type: 'end', end: { startedAt, sent, lateP99Ms } });
}

/** Whether an ingestion answer counts the one record its request sent. */
function countsOne(request: ShopRequest, answer: unknown): boolean {
  const { accepted, upserted } = answer as { accepted?: unknown; upserted?: unknown };
  return (request.kind === 'interaction' ? accepted : upserted) === 1;
}

function newReport() {
  return {
    index: [] as number[],
    latencyMs: [] as number[],
    kind: [] as number[],
    status: [] as number[],
    acknowledgedEvents: 0,
    miscounted: 0,
    firstFailure: undefined as string | undefined,
  };
}

function toArrays(report: ReturnType<typeof newReport>): AnsweredRequests {
  return {
    index: Uint32Array.from(report.index),
    latencyMs: Float64Array.from(report.latencyMs),
    kind: Uint8Array.from(report.kind),
    status: Uint16Array.from(report.status),
    acknowledgedEvents: report.acknowledgedEvents,
    miscounted: report.miscounted,
    ...(report.firstFailure !== undefined && { firstFailure: report.firstFailure }),
  };
}
