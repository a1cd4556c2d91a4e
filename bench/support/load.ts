import { Pool } from 'undici';

/** One pre-serialized request body and the number of events it carries. */
export interface Batch {
  body: Buffer;
  events: number;
}

export interface Target {
  url: string;
  path: string;
  headers: Record<string, string>;
}

export interface LoadResult {
  /** Events in the batches answered 200 with the right `accepted` count. */
  events: number;
  seconds: number;
  /** When the run started and ended on the monotonic clock, in µs (as in a .cpuprofile's timestamps). */
  startedUs: number;
  endedUs: number;
  failures: number;
  firstFailure?: string;
}

/** A load's events a second, rounded. */
export function eventsPerSecond(result: LoadResult): number {
  return Math.round(result.events / result.seconds);
}

/**
 * POSTs every batch once, keeping `concurrency` requests in flight over as many keep-alive connections,
 * and checks each answer is 200 with `accepted` equal to the batch's event count.
 */
export async function postBatches(
  target: Target,
  batches: Batch[],
  concurrency: number,
): Promise<LoadResult> {
  const pool = new Pool(target.url, { connections: concurrency });
  const result: LoadResult = { events: 0, seconds: 0, startedUs: 0, endedUs: 0, failures: 0 };
  let next = 0;
  const sender = async () => {
    while (next < batches.length) {
      const batch = batches[next++];
      const failure = await post(pool, target, batch);
      if (failure === undefined) {
        result.events += batch.events;
      } else {
        result.failures++;
        result.firstFailure ??= failure;
      }
    }
  };
  result.startedUs = monotonicMicros();
  try {
    await Promise.all(Array.from({ length: concurrency }, sender));
    result.endedUs = monotonicMicros();
    result.seconds = (result.endedUs - result.startedUs) / 1e6;
  } finally {
    await pool.close();
  }
  return result;
}

/** Sends one batch; resolves with what went wrong, or undefined when the answer is right. */
async function post(pool: Pool, target: Target, batch: Batch): Promise<string | undefined> {
  try {
    const response = await pool.request({
      method: 'POST',
      path: target.path,
      headers: target.headers,
      body: batch.body,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200) return `HTTP ${response.statusCode}: ${text.slice(0, 500)}`;
    const { accepted } = JSON.parse(text) as { accepted?: unknown };
    return accepted === batch.events ? undefined : `accepted ${accepted} of ${batch.events} events`;
  } catch (error) {
    return `request failed: ${String(error)}`;
  }
}

/** The clock of a `.cpuprofile`'s timestamps, so that a run's window can be cut out of a profile. */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
