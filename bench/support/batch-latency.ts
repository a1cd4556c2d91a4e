/**
 * bench/serve's batch part (docs/benchmarks.md): the latency of one `POST /batch` of three recommendation
 * requests against the same three requests sent on their own, one after the other on one connection, as a
 * client without batches would send them, and all three at once on three connections. One client, no
 * other load: the figure is what a page that shows three lists waits for them.
 */
import { Agent, request } from 'undici';
import { quantile } from './quantile.js';

export interface BatchRequestSpec {
  method: 'GET' | 'POST';
  /** Path and query string. */
  path: string;
  /** The JSON body of a POST. */
  body?: unknown;
}

export interface BatchLatencyFigures {
  /** Median and p99 wall time in ms: the batch, the three sequential requests, the three at once. */
  batch: { p50Ms: number; p99Ms: number };
  sequential: { p50Ms: number; p99Ms: number };
  concurrent: { p50Ms: number; p99Ms: number };
  /** The batch's median over the sequential requests', and over the concurrent ones'. */
  ratio: number;
  ratioConcurrent: number;
  iterations: number;
}

const WARMUP_ITERATIONS = 50;

async function send(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  spec: BatchRequestSpec,
): Promise<unknown> {
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const response = await request(`${url}${spec.path}`, {
    dispatcher: agent,
    method: spec.method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${spec.path}: HTTP ${response.statusCode}: ${text}`);
  return JSON.parse(text);
}

function figures(samples: number[]): { p50Ms: number; p99Ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (ms: number) => Number(ms.toFixed(3));
  return { p50Ms: round(quantile(sorted, 0.5)), p99Ms: round(quantile(sorted, 0.99)) };
}

/**
 * Measures `iterations` rounds, each timing the three ways in turn (the order rotating from round to
 * round, so that none always follows the others), after a warm-up. `requestsOf(i)` gives round i's three
 * requests: the three ways of a round send the same ones.
 */
export async function measureBatchLatency(
  url: string,
  headers: Record<string, string>,
  requestsOf: (round: number) => BatchRequestSpec[],
  iterations: number,
): Promise<BatchLatencyFigures> {
  const agent = new Agent({ connections: 3, pipelining: 1 });
  try {
    const samples = { batch: [] as number[], sequential: [] as number[], concurrent: [] as number[] };
    const ways = {
      batch: async (requests: BatchRequestSpec[]) => {
        const answer = (await send(agent, url, headers, {
          method: 'POST',
          path: '/batch',
          body: { requests },
        })) as { results: { status: number }[] };
        if (answer.results.some((result) => result.status !== 200))
          throw new Error(`a batch's request failed: ${JSON.stringify(answer).slice(0, 500)}`);
      },
      sequential: async (requests: BatchRequestSpec[]) => {
        for (const spec of requests) await send(agent, url, headers, spec);
      },
      concurrent: async (requests: BatchRequestSpec[]) => {
        await Promise.all(requests.map((spec) => send(agent, url, headers, spec)));
      },
    };
    const names = Object.keys(ways) as (keyof typeof ways)[];
    for (let round = 0; round < WARMUP_ITERATIONS + iterations; round++) {
      const requests = requestsOf(round);
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length];
        const started = performance.now();
        await ways[name](requests);
        if (round >= WARMUP_ITERATIONS) samples[name].push(performance.now() - started);
      }
    }
    const batch = figures(samples.batch);
    const sequential = figures(samples.sequential);
    const concurrent = figures(samples.concurrent);
    return {
      batch,
      sequential,
      concurrent,
      ratio: Number((batch.p50Ms / sequential.p50Ms).toFixed(3)),
      ratioConcurrent: Number((batch.p50Ms / concurrent.p50Ms).toFixed(3)),
      iterations,
    };
  } finally {
    await agent.close();
  }
}
