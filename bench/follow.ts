/**
 * Daemons sharing a PostgreSQL store follow each other's writes (docs/architecture.md, "The store"): how
 * long after a write's answer on one daemon it shows through the other's API, against the contract's
 * 1 s for history effects (p95 ≤ 200 ms). Two daemons on one throwaway PostgreSQL cluster (or `--store`)
 * and one data dir; `--writes` times, one interaction of a new user is posted to the first, and the
 * second is asked for that user's recently viewed items every `--poll` ms until it names the item. The
 * baseline is the same measure taken on the daemon that wrote (one request after the answer), so that
 * the delay of following reads as its excess over it. The writes run twice: alone, then while the first
 * daemon also ingests a background stream of `--background` interactions a second.
 *
 *   npm run build && node dist/bench/follow.js [--writes 300] [--poll 5] [--background 2000]
 *     [--store postgres://...]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { OPERATOR_KEY, serveCommand } from './support/bench-daemon.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { positiveInteger } from './support/options.js';
import { startPostgres, type TestPostgres } from './support/postgres.js';
import { quantile } from './support/quantile.js';
import { postJson } from './support/shop-loader.js';

const { values } = parseArgs({
  options: {
    writes: { type: 'string', default: '300' },
    poll: { type: 'string', default: '5' },
    background: { type: 'string', default: '2000' },
    store: { type: 'string' },
  },
});
const writes = positiveInteger('--writes', values.writes);
const pollMs = positiveInteger('--poll', values.poll);
const backgroundPerSecond = positiveInteger('--background', values.background);

/** CONTRACT, "Freshness of effects": history effects within 1 s, p95 at most 200 ms. */
const BOUND_MS = 1_000;
const P95_MS = 200;
const ITEMS = 1_000;
/** The background stream's batches: one every BACKGROUND_TICK_MS. */
const BACKGROUND_TICK_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Shop {
  headers: Record<string, string>;
}

async function start(url: string, dataDir: string): Promise<ChildServer> {
  return startChildServer(
    'daemon',
    serveCommand([
      '--port',
      '0',
      '--no-embeddings',
      '--data-dir',
      dataDir,
      '--store',
      url,
      '--log-level',
      'warn',
    ]),
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: OPERATOR_KEY },
  );
}

async function recentlyViewed(url: string, shop: Shop, userId: string): Promise<string[]> {
  const answer = (await postJson(
    `${url}/recommendations`,
    shop.headers,
    { logicType: 'recently-viewed', userId, count: 5, returnProperties: false },
    200,
  )) as { items: { itemId: string }[] };
  return answer.items.map((item) => item.itemId);
}

/** Milliseconds from `from` until `url` names `itemId` among the user's recently viewed items. */
async function shownAfter(url: string, shop: Shop, userId: string, itemId: string, from: number) {
  for (;;) {
    if ((await recentlyViewed(url, shop, userId)).includes(itemId)) return performance.now() - from;
    if (performance.now() - from > 10 * BOUND_MS) return Infinity;
    await sleep(pollMs);
  }
}

/** A view of a new user posted to `writer`, and how long until `reader` (and `writer`) show it. */
async function measure(writer: string, reader: string, shop: Shop, n: number, tag: string) {
  const userId = `${tag}-${n}`;
  const itemId = `i${n % ITEMS}`;
  await postJson(
    `${writer}/ingestion/interactions`,
    shop.headers,
    {
      interactions: [{ userId, itemId, type: 'view' }],
    },
    200,
  );
  const answered = performance.now();
  const baseline = await shownAfter(writer, shop, userId, itemId, answered);
  // Counted from the answer, as the baseline: the other daemon had the baseline's request's time too.
  const followed = await shownAfter(reader, shop, userId, itemId, answered);
  return { baseline, followed };
}

function summary(name: string, ms: number[]): string {
  const sorted = [...ms].sort((x, y) => x - y);
  const f = (q: number) => quantile(sorted, q).toFixed(1);
  return `${name}: p50 ${f(0.5)} ms, p95 ${f(0.95)} ms, p99 ${f(0.99)} ms, max ${f(1)} ms`;
}

/** Posts `backgroundPerSecond` interactions a second to `url` until `stop` is set. */
function backgroundStream(url: string, shop: Shop, stop: { done: boolean }): Promise<void> {
  const perBatch = Math.max(1, Math.round((backgroundPerSecond * BACKGROUND_TICK_MS) / 1000));
  let batch = 0;
  return (async () => {
    while (!stop.done) {
      const started = performance.now();
      const interactions = Array.from({ length: perBatch }, (_, i) => ({
        userId: `bg-${(batch * perBatch + i) % 5000}`,
        itemId: `i${(batch * 7 + i) % ITEMS}`,
        type: 'view',
      }));
      batch++;
      await postJson(`${url}/ingestion/interactions`, shop.headers, { interactions }, 200);
      await sleep(Math.max(0, BACKGROUND_TICK_MS - (performance.now() - started)));
    }
  })();
}

async function phase(a: string, b: string, shop: Shop, tag: string): Promise<void> {
  const baseline: number[] = [];
  const followed: number[] = [];
  for (let n = 0; n < writes; n++) {
    // Alternately written to each daemon and read from the other.
    const [writer, reader] = n % 2 === 0 ? [a, b] : [b, a];
    const result = await measure(writer, reader, shop, n, tag);
    baseline.push(result.baseline);
    followed.push(result.followed);
  }
  const late = followed.filter((ms) => ms > BOUND_MS).length;
  console.log(`  ${tag} (${writes} writes, load average ${loadavg()[0].toFixed(2)}):`);
  console.log(`    ${summary('shown by the daemon that wrote (baseline)', baseline)}`);
  console.log(`    ${summary('shown by the other daemon', followed)}`);
  const p95 = quantile(
    [...followed].sort((x, y) => x - y),
    0.95,
  );
  console.log(
    `    over ${BOUND_MS} ms: ${late}; p95 ${p95 <= P95_MS ? 'within' : 'OVER'} ${P95_MS} ms; ` +
      `p50 excess over the baseline ${(
        quantile(
          [...followed].sort((x, y) => x - y),
          0.5,
        ) -
        quantile(
          [...baseline].sort((x, y) => x - y),
          0.5,
        )
      ).toFixed(1)} ms`,
  );
}

let postgres: TestPostgres | undefined;
const dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-follow-'));
const daemons: ChildServer[] = [];
try {
  const url = values.store ?? (postgres = await startPostgres()).url;
  daemons.push(await start(url, dataDir), await start(url, dataDir));
  const [a, b] = daemons.map((daemon) => daemon.url);
  const credentials = (await postJson(
    `${a}/tenants`,
    { 'x-api-key': OPERATOR_KEY },
    { tenantId: 'bench' },
    201,
  )) as {
    apiKey: string;
  };
  const shop: Shop = { headers: { 'x-tenant-id': 'bench', 'x-api-key': credentials.apiKey } };
  const items = Array.from({ length: ITEMS }, (_, i) => ({ externalId: `i${i}` }));
  await postJson(`${a}/ingestion/items`, shop.headers, { items }, 200);
  // The other daemon knows the tenant and its items.
  for (;;) {
    const known = await fetch(`${b}/catalog/items/i${ITEMS - 1}`, { headers: shop.headers });
    await known.arrayBuffer();
    if (known.status === 200) break;
    await sleep(50);
  }
  console.log(`follow: two daemons on one PostgreSQL, polling every ${pollMs} ms`);
  await phase(a, b, shop, 'alone');
  const stop = { done: false };
  const streams = [backgroundStream(a, shop, stop)];
  await sleep(1_000);
  await phase(a, b, shop, `with ${backgroundPerSecond} background interactions/s on the first`);
  stop.done = true;
  await Promise.all(streams);
} finally {
  await Promise.all(daemons.map((daemon) => daemon.stop()));
  await postgres?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
