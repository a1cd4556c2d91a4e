/**
 * Ingestion latency while recommendations are served (docs/benchmarks.md): a daemon loaded with a
 * generated shop takes batches of 500 new interactions at a paced rate (default 10 a second, 5,000
 * events a second) while uncached user-to-item requests for the shop's users arrive at their own paced
 * rate (default 200 a second). Both loads are open-loop (support/paced-load.ts): a request's latency
 * counts from when it was sent, at its due time give or take the sender's timer (`lateP99Ms`). Prints one
 * JSON line: the batches' p50, p99 and p99.9 in ms, judged against a p99 of 50 ms, and the
 * recommendations' figures beside them.
 *
 *   npm run build && node dist/bench/ingest-latency.js [--items 20000] [--interactions 200000]
 *     [--batch-rate 10] [--rate 200] [--seconds 20]
 */
import { parseArgs } from 'node:util';
import { generateInteractions, type ShopInteraction } from '../fixtures/shop.js';
import { Rng } from '../fixtures/prng.js';
import { startBenchDaemon } from './support/bench-daemon.js';
import type { ChildServer } from './support/child-server.js';
import { positiveInteger } from './support/options.js';
import { runPaced, type PacedFigures } from './support/paced-load.js';
import { loadShop } from './support/shop-loader.js';

const BATCH_SIZE = 500;
const P99_TARGET_MS = 50;
const RECOMMENDATION_CONNECTIONS = 16;
const BATCH_CONNECTIONS = 8;

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '20000' },
    interactions: { type: 'string', default: '200000' },
    'batch-rate': { type: 'string', default: '10' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '20' },
  },
  // Not strict: bench/run forwards the same arguments to every benchmark.
  strict: false,
});
const items = positiveInteger('--items', values.items);
const interactions = positiveInteger('--interactions', values.interactions);
const batchRate = positiveInteger('--batch-rate', values['batch-rate']);
const rate = positiveInteger('--rate', values.rate);
const seconds = positiveInteger('--seconds', values.seconds);

/** Batches of new events of the same shop (other sessions, the last day), serialized before timing. */
function newBatches(size: { items: number; users: number; sessions: number }, count: number): Buffer[] {
  const batches: Buffer[] = [];
  let pending: ShopInteraction[] = [];
  const events = generateInteractions({ ...size, seed: 2027, interactions: count * BATCH_SIZE, days: 1 });
  for (const event of events) {
    pending.push(event);
    if (pending.length < BATCH_SIZE) continue;
    batches.push(Buffer.from(JSON.stringify({ interactions: pending })));
    pending = [];
  }
  return batches;
}

/**
 * Resolves once the daemon's own process used less than a fifth of a core over two seconds (at most after
 * a minute): it builds its first models after a load. Only the daemon counts, not the shared machine.
 */
async function untilDaemonSettles(daemon: ChildServer): Promise<void> {
  const deadline = Date.now() + 60_000;
  let before = daemon.cpuSeconds();
  while (before !== undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = daemon.cpuSeconds()!;
    if (after - before < 0.4) return;
    before = after;
  }
}

function figures(result: PacedFigures) {
  const { p50Ms, p99Ms, p999Ms, lateP99Ms, fromDueP99Ms, errors, non2xx } = result;
  return { rps: Math.round(result.rps), p50Ms, p99Ms, p999Ms, lateP99Ms, fromDueP99Ms, errors, non2xx };
}

const { daemon, headers, stop } = await startBenchDaemon('ingest-latency');
try {
  const users = Math.max(1_000, Math.round(interactions / 25));
  const size = { items, users, sessions: Math.round(users * 0.3) };
  console.log(`ingest-latency: loading ${interactions.toLocaleString('en-US')} interactions...`);
  const shop = await loadShop(daemon.url, headers, { ...size, interactions, days: 29, now: new Date() });
  await untilDaemonSettles(daemon);
  const rng = new Rng(2026, 12);
  const paths = Array.from(
    { length: 20_000 },
    () =>
      `/recommendations/user-to-item/${encodeURIComponent(shop.userIds[rng.int(shop.userIds.length)])}?count=10&noCache=true`,
  );
  const bodies = newBatches(size, batchRate * seconds);
  console.log(
    `ingest-latency: ${batchRate} batches of ${BATCH_SIZE} a second and ${rate} recommendations a second, for ${seconds} s`,
  );
  const [batches, recommendations] = await Promise.all([
    runPaced({
      url: daemon.url,
      headers: { ...headers, 'content-type': 'application/json' },
      paths: ['/ingestion/interactions'],
      bodies,
      rate: batchRate,
      seconds,
      connections: BATCH_CONNECTIONS,
    }),
    runPaced({ url: daemon.url, headers, paths, rate, seconds, connections: RECOMMENDATION_CONNECTIONS }),
  ]);
  const met = batches.p99Ms <= P99_TARGET_MS;
  const failures = batches.errors + batches.non2xx + recommendations.errors + recommendations.non2xx;
  console.log(
    JSON.stringify({
      bench: 'ingest-latency',
      batch: BATCH_SIZE,
      batchRate,
      rate,
      seconds,
      batches: figures(batches),
      recommendations: figures(recommendations),
      target: `batch p99 <= ${P99_TARGET_MS} ms`,
      met,
      failures,
    }),
  );
  if (failures > 0) {
    console.error('ingest-latency: the run is not valid, some requests failed');
    process.exitCode = 1;
  }
} finally {
  await stop();
}
