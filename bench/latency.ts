/**
 * Tail latency (docs/benchmarks.md): uncached user-to-item requests at a paced rate (default 1,000 per
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
 * Last, the daemon is restarted on its data `--restarts` times, with and without its warm-up by turns
 * (`--warm-up both`, or `on`, `off`), and the same load sent for 20 s from the moment `GET /health/ready`
 * answers 200: p50, p99 and the worst, and the daemon's CPU time (its event loop's, all its threads'),
 * for seconds 0-1, 1-5, 5-10 and, as the same daemon's reference, 10-20; with the warm-up, judged
 * against the same p99 in every window. Beside them, the bare route's 20 s after its own start, in the
 * same windows, and its steady p99. Each line also says how long the start took (to the port, to ready)
 * and names any model swapped in meanwhile, from the daemon's /metrics; a last line gathers each
 * window's p99 over the restarts.
 *
 * `--parts steady,building,restarted` runs only some of the parts (in that order); `--store <dir>` keeps
 * the loaded data dir in `<dir>` and, on later runs of the same sizes, starts the daemon on it instead of
 * loading one: a reused store serves the restarted part only (the others measure a daemon just loaded).
 *
 *   npm run build && node dist/bench/latency.js [--items 100000] [--interactions 2000000] [--rate 1000]
 *     [--seconds 20] [--build-seconds 300] [--restarts 3] [--warm-up both] [--store <dir>]
 *     [--parts steady,building,restarted]
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../fixtures/prng.js';
import { request } from 'undici';
import { OPERATOR_KEY, serveCommand, startBenchDaemon } from './support/bench-daemon.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { waitForIdle } from './support/machine-cpu.js';
import { positiveInteger } from './support/options.js';
import { runPaced, type PacedFigures, type WindowFigures } from './support/paced-load.js';
import { benchShop, loadShop, postRandomInteractions } from './support/shop-loader.js';

const P99_TARGET_MS = 5;
/** New interactions, as a share of those loaded, that make the daemon's models stale (docs/batch-models.md). */
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
/**
 * The windows of a restarted daemon's first seconds, by their ends in seconds after it was ready; the
 * last, once the first 10 s are over, is the same daemon's reference, measured in the same minute.
 */
const RESTART_WINDOWS_S = [1, 5, 10, 20];
const RESTART_SECONDS = RESTART_WINDOWS_S[RESTART_WINDOWS_S.length - 1];
/** A paced load sends its first request this long after it is asked to (support/paced-load.ts). */
const LOAD_START_MS = 50;
/** A daemon restarted on a large store loads its state before it listens. */
const RESTART_TIMEOUT_MS = 15 * 60_000;
/** Written next to a kept store: what a later run needs to reuse it. */
const KEPT_STORE_FILE = 'bench-latency-store.json';
const PARTS = ['steady', 'building', 'restarted'] as const;
const BARE_ROUTE = fileURLToPath(new URL('./support/bare-recommendations.js', import.meta.url));

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    interactions: { type: 'string', default: '2000000' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '20' },
    'build-seconds': { type: 'string', default: '300' },
    restarts: { type: 'string', default: '3' },
    parts: { type: 'string', default: PARTS.join(',') },
    store: { type: 'string' },
    'warm-up': { type: 'string', default: 'both' },
  },
  strict: false,
});
const items = positiveInteger('--items', values.items);
const interactions = positiveInteger('--interactions', values.interactions);
const rate = positiveInteger('--rate', values.rate);
const seconds = positiveInteger('--seconds', values.seconds);
const buildSeconds = positiveInteger('--build-seconds', values['build-seconds']);
const restarts = positiveInteger('--restarts', values.restarts);
const parts = new Set(String(values.parts).split(','));
for (const part of parts) {
  if (!(PARTS as readonly string[]).includes(part)) throw new Error(`--parts takes ${PARTS.join(', ')}`);
}
const WARM_UP_MODES: Record<string, boolean[]> = { both: [false, true], on: [true], off: [false] };
const warmUpModes = WARM_UP_MODES[String(values['warm-up'])];
if (!warmUpModes) throw new Error('--warm-up takes both, on or off');
const keptStore = typeof values.store === 'string' ? values.store : undefined;

function report(name: string, figures: PacedFigures, target: boolean, more: object = {}): boolean {
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
      ...more,
      ...(target && { target: `p99 <= ${P99_TARGET_MS} ms`, met }),
    }),
  );
  return !target || met;
}

/** A load's windows as the JSON line prints them, with the server's CPU time in each when measured. */
function windowsOf(figures: PacedFigures, cpu: object[] = []): object[] {
  return (figures.windows ?? []).map(({ fromS, toS, requests, p50Ms, p99Ms, maxMs }: WindowFigures, i) =>
    Object.assign({ seconds: `${fromS}-${toS}`, requests, p50Ms, p99Ms, maxMs }, cpu[i]),
  );
}

const paced = (
  url: string,
  headers: Record<string, string>,
  paths: readonly string[],
  forSeconds = seconds,
  signal?: AbortSignal,
  windows?: readonly number[],
) => runPaced({ url, headers, paths, rate, seconds: forSeconds, connections: CONNECTIONS, windows }, signal);

/** CPU time a server spent in each window of a load started now, its event loop's and all its threads'. */
async function cpuByWindow(
  server: ChildServer,
  windows: readonly number[],
): Promise<{ eventLoopMs: number; allThreadsMs: number }[]> {
  const sample = () => ({ main: server.mainThreadCpuSeconds() ?? NaN, all: server.cpuSeconds() ?? NaN });
  const started = performance.now() + LOAD_START_MS;
  const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, started + ms - performance.now()));
  await at(0);
  let last = sample();
  const figures: { eventLoopMs: number; allThreadsMs: number }[] = [];
  for (const end of windows) {
    await at(end * 1000);
    const now = sample();
    figures.push({
      eventLoopMs: Math.round((now.main - last.main) * 1000),
      allThreadsMs: Math.round((now.all - last.all) * 1000),
    });
    last = now;
  }
  return figures;
}

/** Builds the daemon's scheduler completed so far (built and swapped in), by model, from its /metrics. */
async function completedBuilds(url: string): Promise<Map<string, number>> {
  const response = await request(`${url}/metrics`, { headers: { 'x-api-key': OPERATOR_KEY } });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET /metrics answered ${response.statusCode}: ${text}`);
  const counts = new Map<string, number>();
  const line =
    /^nextrec_model_build_duration_seconds_count\{[^}]*model="([^"]+)"[^}]*outcome="ok"[^}]*\} (\d+)$/gm;
  for (const [, model, count] of text.matchAll(line)) counts.set(model, Number(count));
  return counts;
}

/** The builds in `after` that `before` did not count yet. */
function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const builds = new Map<string, number>();
  for (const [model, count] of after) {
    if (count > (before.get(model) ?? 0)) builds.set(model, count - (before.get(model) ?? 0));
  }
  return builds;
}

function describeBuilds(builds: Map<string, number>): string {
  if (builds.size === 0) return 'none, so no build was measured';
  return [...builds].map(([model, count]) => (count > 1 ? `${model} ×${count}` : model)).join(', ');
}

/** The models the bench tenant's requests rank from (the default algorithms'), which the daemon builds. */
const MODELS_IN_USE = ['cooccurrence', 'ease', 'vectors'] as const;
/** A build over millions of interactions takes a while on a shared 2-core machine. */
const MODEL_TIMEOUT_MS = 20 * 60_000;

/**
 * Resolves once the daemon serves every model the tenant's requests use, built from at least 9 tenths of
 * what it holds (interactions; items for vectors), so that a restarted daemon has nothing to build.
 */
async function waitForModels(url: string): Promise<void> {
  const deadline = Date.now() + MODEL_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const response = await request(`${url}/debug/memory`, { headers: { 'x-api-key': OPERATOR_KEY } });
    const text = await response.body.text();
    if (response.statusCode !== 200)
      throw new Error(`GET /debug/memory answered ${response.statusCode}: ${text}`);
    const { models } = (
      JSON.parse(text) as { tenants: Record<string, { models: Record<string, { source: number }> }> }
    ).tenants.bench;
    const sources: Record<string, number> = {
      cooccurrence: interactions,
      ease: interactions,
      vectors: items,
    };
    if (MODELS_IN_USE.every((model) => (models[model]?.source ?? 0) >= 0.9 * sources[model])) return;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
  throw new Error(`the models were not built in ${MODEL_TIMEOUT_MS / 60_000} min`);
}

/** Resolves once `GET /health/ready` answers 200, asking every few milliseconds. */
async function untilReady(url: string): Promise<void> {
  for (;;) {
    const response = await request(`${url}/health/ready`);
    await response.body.dump();
    if (response.statusCode === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `nextrec serve` on the data dir, as the bench daemon runs: started afresh, timed to its readiness. */
async function startOn(
  dataDir: string,
  warm = true,
): Promise<{ daemon: ChildServer; listenS: number; readyS: number }> {
  const started = performance.now();
  const flags = ['--port', '0', '--data-dir', dataDir, '--log-level', 'warn'];
  const daemon = await startChildServer(
    'daemon',
    serveCommand(warm ? flags : [...flags, '--no-warm-up']),
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: OPERATOR_KEY },
    RESTART_TIMEOUT_MS,
  );
  const listenS = (performance.now() - started) / 1000;
  await untilReady(daemon.url);
  return { daemon, listenS, readyS: (performance.now() - started) / 1000 };
}

/** What a kept store holds, for a later run to reuse it. */
interface KeptStore {
  sizes: { items: number; interactions: number };
  headers: Record<string, string>;
  userIds: string[];
}

/** The kept store's description, when `--store` names one loaded with the same sizes. */
function reusableStore(): KeptStore | undefined {
  if (keptStore === undefined) return undefined;
  const file = path.join(keptStore, KEPT_STORE_FILE);
  if (!existsSync(file)) return undefined;
  const kept = JSON.parse(readFileSync(file, 'utf8')) as KeptStore;
  return kept.sizes.items === items && kept.sizes.interactions === interactions ? kept : undefined;
}

// The servers' exit handlers kill them: on a signal too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
let failed = false;
let bareSteady: PacedFigures | undefined;
let bareStart: PacedFigures | undefined;
const barePath = ['/recommendations/item-to-item/sku-1'];
const startBare = () =>
  startChildServer('bare route', [BARE_ROUTE], /bare route listening on (http:\/\/\S+)/);
let bare = await startBare();
try {
  // The load's thread compiles its own code during its first load: the bare route gets a warm-up too.
  report(
    `bare route, the first ${WARM_UP_SECONDS} s`,
    await paced(bare.url, {}, barePath, WARM_UP_SECONDS),
    false,
  );
  // Then, started afresh, its first seconds in the restarted part's windows: what a process whose code
  // is not compiled yet answers in them with nothing else to build (the load's thread is warm by now).
  await bare.stop();
  bare = await startBare();
  const bareCpu = cpuByWindow(bare, RESTART_WINDOWS_S);
  bareStart = await paced(bare.url, {}, barePath, RESTART_SECONDS, undefined, RESTART_WINDOWS_S);
  report(`bare route, the ${RESTART_SECONDS} s after its start`, bareStart, false, {
    windows: windowsOf(bareStart, await bareCpu),
  });
  bareSteady = await paced(bare.url, {}, barePath);
  report('bare route', bareSteady, false);
} finally {
  await bare.stop();
}

const reused = reusableStore();
let daemon: ChildServer;
let dataDir: string;
let headers: Record<string, string>;
let userIds: string[];
/** The items interactions mention, on a store loaded by this run. */
let itemIds: string[] = [];
let removeStore = () => {};
if (reused) {
  console.log(`latency: reusing the store in ${keptStore}: the restarted part only`);
  for (const part of PARTS) if (part !== 'restarted') parts.delete(part);
  dataDir = path.join(keptStore!, 'data');
  ({ daemon } = await startOn(dataDir));
  ({ headers, userIds } = reused);
} else {
  // Without the building part, the models are built at once (the daemon's spare CPU runs them at the
  // lowest priority, where a busy machine starves them), for the restarted part to find them built.
  const bench = await startBenchDaemon(
    'latency',
    parts.has('building') ? {} : { NEXTREC_SPARE_CPU: 'false' },
  );
  ({ daemon, dataDir, headers } = bench);
  removeStore = () => rmSync(bench.dataDir, { recursive: true, force: true });
  process.once('exit', removeStore);
  const shop = await loadShop(daemon.url, headers, benchShop(items, interactions)).catch(
    async (error: unknown) => {
      await bench.stop();
      throw error;
    },
  );
  ({ userIds, itemIds } = shop);
}
try {
  if (parts.has('steady')) await waitForIdle();
  // Known users in a shuffled order, each asked with noCache: every answer is ranked.
  const rng = new Rng(2026, 11);
  const paths = Array.from(
    { length: 20_000 },
    () =>
      `/recommendations/user-to-item/${encodeURIComponent(userIds[rng.int(userIds.length)])}?count=10&noCache=true`,
  );
  if (parts.has('steady')) {
    const first = await paced(daemon.url, headers, paths, WARM_UP_SECONDS);
    report(`user-to-item, uncached, the first ${WARM_UP_SECONDS} s after the load`, first, false);
    if (!report('user-to-item, uncached', await paced(daemon.url, headers, paths), true)) failed = true;
  }

  if (parts.has('building')) {
    // New interactions beyond the share that makes a model stale (docs/batch-models.md: 10%): the
    // daemon exports its lake and rebuilds its models in processes of their own, and swaps them in,
    // meanwhile.
    const buildsBefore = await completedBuilds(daemon.url);
    const burst = Math.ceil(interactions * STALE_SHARE);
    await postRandomInteractions(daemon.url, headers, { userIds, itemIds }, burst, BURST_BATCH, rng);
    // The models built from interactions: every one built before but the vectors, built from the catalog.
    const stale = [...buildsBefore.keys()].filter((model) => model !== 'vectors');
    const rebuilt = new AbortController();
    const load = paced(daemon.url, headers, paths, buildSeconds, rebuilt.signal);
    let loading = true;
    void load.finally(() => (loading = false));
    while (loading) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const builds = difference(await completedBuilds(daemon.url), buildsBefore);
      if (stale.every((model) => builds.has(model))) {
        await new Promise((resolve) => setTimeout(resolve, SWAP_SECONDS * 1_000));
        rebuilt.abort();
        break;
      }
    }
    const building = await load;
    const builds = difference(await completedBuilds(daemon.url), buildsBefore);
    const name =
      `user-to-item, uncached, while models build (${Math.round(building.seconds)} s; ` +
      `built meanwhile: ${describeBuilds(builds)})`;
    if (!report(name, building, true) || builds.size === 0) failed = true;
  }

  if (parts.has('restarted')) {
    // A daemon that starts without its models builds them, beside the load.
    await waitForModels(daemon.url);
    if (keptStore !== undefined && !reused) {
      mkdirSync(keptStore, { recursive: true });
      await daemon.stop();
      rmSync(path.join(keptStore, 'data'), { recursive: true, force: true });
      // A rename would not cross file systems (the temp dir's to the kept one's).
      await cp(dataDir, path.join(keptStore, 'data'), { recursive: true });
      dataDir = path.join(keptStore, 'data');
      const kept: KeptStore = { sizes: { items, interactions }, headers, userIds };
      writeFileSync(path.join(keptStore, KEPT_STORE_FILE), JSON.stringify(kept));
      ({ daemon } = await startOn(dataDir));
    }
    // With and without the warm-up by turns, so that both meet the machine as it is at the time.
    const byMode = new Map<boolean, PacedFigures[]>(warmUpModes.map((warm) => [warm, []]));
    for (let restart = 1; restart <= restarts; restart++) {
      for (const warm of restart % 2 === 1 ? warmUpModes : [...warmUpModes].reverse()) {
        await daemon.stop();
        const started = await startOn(dataDir, warm);
        daemon = started.daemon;
        const cpu = cpuByWindow(daemon, RESTART_WINDOWS_S);
        const after = await paced(daemon.url, headers, paths, RESTART_SECONDS, undefined, RESTART_WINDOWS_S);
        byMode.get(warm)!.push(after);
        const builds = await completedBuilds(daemon.url);
        const met = (after.windows ?? []).every((window) => window.p99Ms <= P99_TARGET_MS);
        const name = `user-to-item, uncached, the ${RESTART_SECONDS} s after a restart`;
        report(name, after, false, {
          restart,
          warmUp: warm,
          listenS: Number(started.listenS.toFixed(2)),
          readyS: Number(started.readyS.toFixed(2)),
          windows: windowsOf(after, await cpu),
          swappedIn: builds.size === 0 ? 'none' : describeBuilds(builds),
          // The daemon's default, the warm-up, is judged.
          ...(warm && { target: `p99 <= ${P99_TARGET_MS} ms in every window`, met }),
        });
        if (warm && !met) failed = true;
      }
    }
    // Each window's p99 over the restarts, beside the bare route's in the same run.
    console.log(
      JSON.stringify({
        bench: 'latency',
        case: `the ${RESTART_SECONDS} s after a restart, p99 ms by window over ${restarts} restarts`,
        bare: {
          steady: bareSteady?.p99Ms,
          afterStart: Object.fromEntries(
            (bareStart?.windows ?? []).map((window) => [`${window.fromS}-${window.toS}`, window.p99Ms]),
          ),
        },
        ...Object.fromEntries(
          [...byMode].map(([warm, runs]) => [
            warm ? 'warmUp' : 'noWarmUp',
            Object.fromEntries(
              RESTART_WINDOWS_S.map((toS, i) => [
                `${i === 0 ? 0 : RESTART_WINDOWS_S[i - 1]}-${toS}`,
                runs.map((run) => run.windows![i].p99Ms),
              ]),
            ),
          ]),
        ),
      }),
    );
  }
} finally {
  await daemon.stop();
  removeStore();
}
if (failed) process.exitCode = 1;
