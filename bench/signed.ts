/**
 * Signed requests against API-key requests (docs/benchmarks.md): cached user-to-item answers asked for
 * with each credential kind under autocannon load, in rounds, each signed case between two runs of the
 * same requests (paths, parameters, bodies) sent with the API key. Prints one JSON line per case (median ratio of req/s over the
 * neighbouring API-key runs, p99) and whether it meets the target of 0.9.
 *
 *   npm run build && node dist/bench/signed.js [--seconds 5] [--rounds 3] [--connections 16]
 */
import { createHmac } from 'node:crypto';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { request } from 'undici';
import { stringToSign } from '../src/client/signing.js';
import { startBenchDaemon, type BenchCredentials } from './support/bench-daemon.js';
import { positiveInteger } from './support/options.js';
import { loadShop, postJson } from './support/shop-loader.js';

const TARGET_RATIO = 0.9;
const SEEDS = 64;

type Kind = 'private HMAC' | 'public HMAC' | 'JWT';

interface Case {
  name: string;
  method: 'GET' | 'POST';
  kind: Kind;
  /** GET: every request carries a signature not seen before, as when each page view signs anew. */
  fresh?: boolean;
}

const CASES: Case[] = [
  { name: 'GET, private HMAC, repeated signed URLs', method: 'GET', kind: 'private HMAC' },
  { name: 'GET, private HMAC, a new signature each', method: 'GET', kind: 'private HMAC', fresh: true },
  { name: 'GET, public HMAC, a new signature each', method: 'GET', kind: 'public HMAC', fresh: true },
  { name: 'GET, JWT', method: 'GET', kind: 'JWT' },
  // A POST signature is good for one request: every one is new.
  { name: 'POST, private HMAC', method: 'POST', kind: 'private HMAC' },
];

/** The signing parameters of a GET's query, which the API-key baseline leaves out. */
const SIGNING_PARAMS = /&(?:publicToken|hmac_timestamp|hmac_sign)=[^&]*/g;

/** Timestamps the fresh cases spread their signatures over, inside the 300 s window either side. */
const FRESH_TIMESTAMPS = 500;

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
  },
  strict: false,
});
const seconds = positiveInteger('--seconds', values.seconds);
const rounds = positiveInteger('--rounds', values.rounds);
const connections = positiveInteger('--connections', values.connections);

function hmac(key: string, message: string): string {
  return createHmac('sha256', key).update(message).digest('hex');
}

/** A GET target signed at `timestamp`: valid for the whole run, as GET signatures may repeat in their window. */
function signedGet(target: string, token: string, asPublic: boolean, timestamp: number): string {
  let url = `${target}${asPublic ? `&publicToken=${token}` : ''}&hmac_timestamp=${timestamp}`;
  url += `&hmac_sign=${hmac(token, stringToSign('GET', url, '', ''))}`;
  return url;
}

interface Prepared {
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A case's requests, built and signed before the run so that the load generator does the same work for
 * every case. A POST signature is good for one request, so each POST is distinct (a `nonce` parameter
 * in its signed query) and there are more of them than a run can send.
 */
function prepare(
  testCase: Case,
  credentials: BenchCredentials,
  jwt: string,
  users: string[],
  posts: number,
): Prepared[] {
  const { tenantId, privateToken, publicToken } = credentials;
  const auth: Record<string, string> = testCase.kind === 'JWT' ? { authorization: `Bearer ${jwt}` } : {};
  if (testCase.method === 'GET') {
    // Fresh signatures: a user's requests differ by timestamp, more of them than the daemon remembers.
    const now = Math.floor(Date.now() / 1000);
    const timestamps = testCase.fresh
      ? Array.from({ length: FRESH_TIMESTAMPS }, (_, i) => now - FRESH_TIMESTAMPS / 2 + i)
      : [now];
    return timestamps.flatMap((timestamp) =>
      users.map((userId) => {
        const target = `/recommendations/user-to-item/${userId}?count=10`;
        const path =
          testCase.kind === 'private HMAC'
            ? signedGet(target, privateToken, false, timestamp)
            : testCase.kind === 'public HMAC'
              ? signedGet(target, publicToken, true, timestamp)
              : target;
        return { path, headers: { 'x-tenant-id': tenantId, ...auth } };
      }),
    );
  }
  const timestamp = String(Math.floor(Date.now() / 1000));
  return Array.from({ length: posts }, (_, i) => {
    const path = `/recommendations?nonce=${i}`;
    const body = JSON.stringify({ logicType: 'user-to-item', userId: users[i % users.length], count: 10 });
    const headers: Record<string, string> = {
      'x-tenant-id': tenantId,
      'content-type': 'application/json',
      ...auth,
    };
    if (testCase.kind === 'private HMAC') {
      headers['x-hmac-timestamp'] = timestamp;
      headers['x-hmac-sign'] = hmac(privateToken, stringToSign('POST', path, timestamp, body));
    }
    return { path, headers, body };
  });
}

/** One autocannon run of prepared requests, each connection cycling through its own share. */
function run(url: string, method: 'GET' | 'POST', requests: Prepared[]) {
  let clients = 0;
  return autocannon({
    url,
    connections,
    duration: seconds,
    method,
    setupClient: (client) => {
      const index = clients++;
      const share = requests.filter((_, i) => i % connections === index);
      client.setRequests(share.map((request) => ({ method, ...request })));
    },
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const { daemon, credentials, headers: apiHeaders, stop } = await startBenchDaemon('signed');
try {
  const shop = await loadShop(daemon.url, apiHeaders, {
    items: 5_000,
    users: 2_000,
    sessions: 500,
    interactions: 60_000,
    days: 20,
    now: new Date(),
  });
  const users = shop.userIds.slice(0, SEEDS);
  const { token: jwt } = (await postJson(`${daemon.url}/auth/token`, apiHeaders, {}, 200)) as {
    token: string;
  };
  // Every answer cached before anything is measured, and every path warmed up once.
  for (const userId of users) {
    const answer = await request(`${daemon.url}/recommendations/user-to-item/${userId}?count=10`, {
      headers: apiHeaders,
    });
    if (answer.statusCode !== 200) throw new Error(`warm-up answered ${answer.statusCode}`);
    await answer.body.dump();
  }
  // Comfortably more POSTs than a run sends: no signature may be sent twice.
  const posts = 60_000 * seconds;
  /**
   * A case's requests, or the same requests (paths, parameters and bodies) sent with the API key instead
   * of their signature or token: the baseline differs from the case in authentication alone. (A fresh
   * case's requests differ by their signatures only, so its baseline cycles through fewer distinct ones.)
   */
  const measure = (testCase: Case, withApiKey = false) => {
    const requests = prepare(testCase, credentials, jwt, users, posts).map((prepared) => {
      if (!withApiKey) return prepared;
      const headers: Record<string, string> = { ...prepared.headers, 'x-api-key': credentials.apiKey };
      for (const name of ['x-hmac-sign', 'x-hmac-timestamp', 'authorization']) delete headers[name];
      // The signing parameters go too: a GET with an API key carries none.
      return { ...prepared, path: prepared.path.replace(SIGNING_PARAMS, ''), headers };
    });
    return run(daemon.url, testCase.method, requests);
  };
  for (const testCase of CASES) {
    await measure(testCase);
    await measure(testCase, true);
  }

  const ratios = new Map<string, { ratio: number[]; p99: number[]; rps: number[]; non2xx: number }>();
  for (let round = 0; round < rounds; round++) {
    for (const testCase of CASES) {
      const before = await measure(testCase, true);
      const signed = await measure(testCase);
      const after = await measure(testCase, true);
      const base = (before.requests.average + after.requests.average) / 2;
      const entry = ratios.get(testCase.name) ?? { ratio: [], p99: [], rps: [], non2xx: 0 };
      entry.ratio.push(signed.requests.average / base);
      entry.p99.push(signed.latency.p99);
      entry.rps.push(signed.requests.average);
      entry.non2xx += signed.non2xx + signed.errors + before.non2xx + after.non2xx;
      ratios.set(testCase.name, entry);
    }
  }
  let missed = 0;
  for (const testCase of CASES) {
    const entry = ratios.get(testCase.name)!;
    const ratio = median(entry.ratio);
    const met = ratio >= TARGET_RATIO && entry.non2xx === 0;
    if (!met) missed++;
    console.log(
      JSON.stringify({
        case: testCase.name,
        reqPerS: Math.round(median(entry.rps)),
        ratioToApiKey: Number(ratio.toFixed(3)),
        ratios: entry.ratio.map((r) => Number(r.toFixed(3))),
        p99Ms: median(entry.p99),
        failed: entry.non2xx,
        target: `>= ${TARGET_RATIO}`,
        met,
      }),
    );
  }
  if (missed > 0) process.exitCode = 1;
} finally {
  await stop();
}
