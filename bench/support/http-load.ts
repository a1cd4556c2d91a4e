import autocannon from 'autocannon';
import { request } from 'undici';
import { monotonicMicros } from './load.js';

/** What varies from one request to the next; everything else is the same for the whole run. */
export interface VaryingPart {
  path: string;
  body?: string;
}

export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The requests to send, spread over the connections. */
  requests: readonly VaryingPart[];
  connections: number;
}

export interface LoadFigures {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Mean size of a response, headers included. */
  responseBytes: number;
  /** Connection errors and timeouts. */
  errors: number;
  non2xx: number;
  /** The timed run on the monotonic clock, in µs (as in a .cpuprofile's timestamps). */
  startedUs: number;
  endedUs: number;
}

/** Runs autocannon against `spec.url` for `durationS` seconds. */
export async function runLoad(spec: LoadSpec, durationS: number): Promise<LoadFigures> {
  const startedUs = monotonicMicros();
  const result = await cannon(spec, durationS);
  const endedUs = monotonicMicros();
  return {
    rps: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    responseBytes: result.throughput.total / result.requests.total,
    errors: result.errors,
    non2xx: result.non2xx,
    startedUs,
    endedUs,
  };
}

function cannon(spec: LoadSpec, durationS: number): Promise<autocannon.Result> {
  let clients = 0;
  return autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: durationS,
    method: spec.method,
    headers: spec.headers,
    // Each connection cycles through its own share of the requests, so that no two ask for the same seed
    // at once. Shares are built into raw requests once: rebuilding one per send (setupRequest) costs the
    // load generator about as much as the bare route costs its server.
    setupClient: (client) => {
      const index = clients++;
      const share = spec.requests.filter((_, i) => i % spec.connections === index);
      if (share.length === 0) share.push(spec.requests[index % spec.requests.length]);
      // Copies: autocannon keeps each request's built buffer on the object it is given.
      client.setRequests(share.map((request) => ({ ...request })));
    },
  });
}

/** What a case's answers must say (`checkFirstAnswer`); `scenario` is checked when given. */
export interface ExpectedAnswer {
  count: number;
  algorithm: string;
  scenario?: string;
}

/**
 * Sends the spec's first request and checks its answer, so that a run of fast errors or empty lists can't
 * pass for a result; `label` names the case in the error.
 */
export async function checkFirstAnswer(
  spec: LoadSpec,
  label: string,
  expected: ExpectedAnswer,
): Promise<void> {
  const { path: requestPath, body } = spec.requests[0];
  const response = await request(`${spec.url}${requestPath}`, {
    method: spec.method,
    headers: spec.headers,
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${label}: HTTP ${response.statusCode}: ${text}`);
  const answer = JSON.parse(text) as { count: number; algorithm: string; scenario?: string };
  if (
    answer.count !== expected.count ||
    answer.algorithm !== expected.algorithm ||
    ('scenario' in expected && answer.scenario !== expected.scenario)
  )
    throw new Error(`${label}: unexpected answer ${text.slice(0, 500)}`);
}
