/**
 * Tail latency (README, "Benchmarks"): uncached user-to-item requests at a paced rate (default 1,000 per
 * second) against a daemon loaded with a generated shop, and the same rate against a bare Fastify route in
 * the same run; then the daemon again while it builds its models after a burst of new interactions.
 * Requests are sent open-loop at their due times (support/paced-load.ts), latency counted from when each
 * was sent, by a thread of the benchmark's that does nothing else.
 * Prints one JSON line per case: p50, p99 and p99.9 in ms, judged against a p99 of 5 ms (the first
 * seconds after the load are reported apart, unjudged). The case while models build also names the
 * builds that ended (models swapped in) during it, from the daemon's /metrics: a run in which none did
 * measured no build, and fails.
 *
 * That case runs from the end of the interactions that make the models stale until every model built
 * from interactions before them was built again and swapped in, and `SWAP_SECONDS` more, in which
 * ranking first reads the new models; at most `--build-seconds`. It covers the lake's export, the builds
 * (co-occurrence and EASE at once, in their two lanes: about 60 s each at this size on 2 idle cores, up
 * to twice that beside the load, started up to a minute late by the scheduler's spacing) and the swaps.
 *
 *   npm run build && node dist/bench/latency.js [--items 100000] [--interactions 2000000] [--rate 1000]
 *     [--seconds 20] [--build-seconds 300]
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../fixtures/prng.js';
import { startBenchDaemon } from './support/bench-daemon.js';
import { startChildServer } from './support/child-server.js';
import { buildsSince, describeBuilds, modelBuilds, type ModelBuilds } from './support/daemon-metrics.js';
import { waitForIdle } from './support/machine-cpu.js';
import { positiveInteger } from './support/options.js';
import { runPaced, type PacedFigures } from './support/paced-load.js';
import { loadShop, postJson } from './support/shop-loader.js';

const P99_TARGET_MS = 5;
/** New interactions, as a share of those loaded, that make the daemon's models stale (README, "Batch models"). */
const STALE_SHARE = 0.11;
const BURST_BATCH = 500;
/**
 * The first requests after a load build what ranking then keeps (a filter's attribute column over every
 * item, popularity, the JIT's code): measured apart, before the case judged against the target.
 */
const WARM_UP_SECONDS = 3;
const CONNECTIONS = 16;
/** The case while models build goes on this long after their last swap, as ranking first reads them. */
const SWAP_SECONDS = 10;
const BARE_ROUTE = fileURLToPath(new URL('./support/bare-recommendations.js', import.meta.url));

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    interactions: { type: 'string', default: '2000000' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '20' },
    'build-seconds': { type: 'string', default: '300' },
  },
  strict: false,
});
const items = positiveInteger('--items', values.items);
const interactions = positiveInteger('--interactions', values.interactions);
const rate = positiveInteger('--rate', values.rate);
const seconds = positiveInteger('--seconds', values.seconds);
const buildSeconds = positiveInteger('--build-seconds', values['build-seconds']);

function report(name: string, figures: PacedFigures, target: boolean): boolean {
  const met = figures.p99Ms <= P99_TARGET_MS;
  console.log(
    JSON.stringify({
      bench: 'latency',
      case: name,
      rate,
      rps: Math.round(figures.rps),
      p50Ms: figures.p50Ms,
      p99Ms: figures.p99Ms,
      p999Ms: figures.p999Ms,
      lateP99Ms: figures.lateP99Ms,
      fromDueP99Ms: figures.fromDueP99Ms,
      errors: figures.errors,
      non2xx: figures.non2xx,
      ...(target && { target: `p99 <= ${P99_TARGET_MS} ms`, met }),
    }),
  );
  return !target || met;
}

const paced = (
  url: string,
  headers: Record<string, string>,
  paths: readonly string[],
  forSeconds = seconds,
  signal?: AbortSignal,
) => runPaced({ url, headers, paths, rate, seconds: forSeconds, connections: CONNECTIONS }, signal);

/** The builds that ended (built and swapped in) since `before`. */
async function completedSince(url: string, before: readonly ModelBuilds[]): Promise<ModelBuilds[]> {
  return buildsSince(await modelBuilds(url), before).filter((build) => build.outcome === 'ok');
}

let failed = false;
const bare = await startChildServer('bare route', [BARE_ROUTE], /bare route listening on (http:\/\/\S+)/);
try {
  const path = ['/recommendations/item-to-item/sku-1'];
  // The load's thread compiles its own code during its first load: the bare route gets a warm-up too.
  report(
    `bare route, the first ${WARM_UP_SECONDS} s`,
    await paced(bare.url, {}, path, WARM_UP_SECONDS),
    false,
  );
  report('bare route', await paced(bare.url, {}, path), false);
} finally {
  await bare.stop();
}

const { daemon, headers, stop } = await startBenchDaemon('latency');
try {
  const users = Math.max(1_000, Math.round(interactions / 25));
  const shop = await loadShop(daemon.url, headers, {
    items,
    users,
    sessions: Math.round(users * 0.3),
    interactions,
    days: 29,
    now: new Date(),
  });
  await waitForIdle();
  // Known users in a shuffled order, each asked with noCache: every answer is ranked.
  const rng = new Rng(2026, 11);
  const paths = Array.from(
    { length: 20_000 },
    () =>
      `/recommendations/user-to-item/${encodeURIComponent(shop.userIds[rng.int(shop.userIds.length)])}?count=10&noCache=true`,
  );
  const first = await paced(daemon.url, headers, paths, WARM_UP_SECONDS);
  report(`user-to-item, uncached, the first ${WARM_UP_SECONDS} s after the load`, first, false);
  if (!report('user-to-item, uncached', await paced(daemon.url, headers, paths), true)) failed = true;

  // New interactions beyond the share that makes a model stale (README, "Batch models": 10%): the daemon
  // exports its lake and rebuilds its models in processes of their own, and swaps them in, meanwhile.
  const buildsBefore = await modelBuilds(daemon.url);
  for (let sent = 0; sent < Math.ceil(interactions * STALE_SHARE); sent += BURST_BATCH) {
    const batch = Array.from({ length: BURST_BATCH }, (_, i) => ({
      userId: shop.userIds[rng.int(shop.userIds.length)],
      itemId: shop.itemIds[rng.int(shop.itemIds.length)],
      type: i % 10 === 0 ? 'purchase' : 'view',
    }));
    await postJson(`${daemon.url}/ingestion/interactions`, headers, { interactions: batch }, 200);
  }
  // The models built from interactions: every one built before but the vectors, built from the catalog.
  const stale = buildsBefore
    .filter((build) => build.outcome === 'ok' && build.model !== 'vectors')
    .map((build) => build.model);
  const rebuilt = new AbortController();
  const load = paced(daemon.url, headers, paths, buildSeconds, rebuilt.signal);
  let loading = true;
  void load.finally(() => (loading = false));
  while (loading) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const builds = await completedSince(daemon.url, buildsBefore);
    if (stale.every((model) => builds.some((build) => build.model === model))) {
      await new Promise((resolve) => setTimeout(resolve, SWAP_SECONDS * 1_000));
      rebuilt.abort();
      break;
    }
  }
  const building = await load;
  const builds = await completedSince(daemon.url, buildsBefore);
  const name =
    `user-to-item, uncached, while models build (${Math.round(building.seconds)} s; ` +
    `built meanwhile: ${builds.length > 0 ? describeBuilds(builds) : 'none, so no build was measured'})`;
  if (!report(name, building, true) || builds.length === 0) failed = true;
} finally {
  await stop();
}
if (failed) process.exitCode = 1;
