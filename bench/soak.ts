/**
 * Soak (docs/benchmarks.md): the traffic a live shop sends (support/shop-traffic.ts: 70%
 * recommendations over five routes, 25% single-event interactions, 5% item upserts) at a fixed rate,
 * open-loop, for a long while, against a daemon whose scheduler rebuilds its models as it does in
 * production. A request's latency counts from when it was due, so that those queued behind a slow one
 * count their wait. The same traffic goes to the bare routes of bench/bare-route.ts before and after, in
 * the same run, for the ratios.
 *
 * Prints a line per 10-s window (p50, p99 and p99.9 of all requests, and of recommendations and writes
 * apart; resident memory; the daemon's CPU and the machine's; from its /metrics the builds that ended, the
 * group commits, the answer cache's hits and the event loop's delay; model swaps and, with `--trace-gc`,
 * the daemon's collections: support/daemon-sampler.ts), then memory by part (GET /debug/memory) at the
 * start, at 60 s and at the end, each request kind's figures, the builds of the whole run, and a summary
 * judged against the targets: p99 ≤ 10 ms in
 * every window after the first 30 s; resident memory growing ≤ 1 MiB a minute over the second half and
 * ending ≤ 1.2 times what it was at 60 s; no answer but 200, and every acknowledged interaction stored.
 * The targets print PASS or FAIL; the exit code does not depend on them.
 *
 *   npm run build && node dist/bench/soak.js [--size small|large] [--rate 300] [--seconds 1800]
 *     [--baseline-seconds 60] [--trace-gc] [--profile] [--json <file>]
 *
 * `--trace-gc` has the daemon's threads log their collections (counted per window); `--profile` profiles
 * each of its threads (--cpu-prof) and summarizes their self time over the traffic.
 *
 * `--size small`: 1,000 items, 200 users; `--size large`: 100,000 items, 2,000,000 interactions (as
 * bench/memory loads them; loading takes a few minutes).
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { startBenchDaemon, type BenchDaemon } from './support/bench-daemon.js';
import { startChildServer } from './support/child-server.js';
import { formatProfileSummary, summarizeProfile } from './support/cpu-profile.js';
import { AnswerLog } from './support/answer-log.js';
import {
  describeMemory,
  memoryReport,
  mib,
  procStatus,
  waitForModels,
  waitForQuiet,
} from './support/daemon-memory.js';
import {
  buildsSince,
  describeBuilds,
  modelBuilds,
  parseModelBuilds,
  scrapeMetrics,
} from './support/daemon-metrics.js';
import { Sampler, type WindowSample } from './support/daemon-sampler.js';
import {
  growthPerMinute,
  latencyFigures,
  median,
  windowsOver,
  type LatencyWindow,
} from './support/latency-windows.js';
import { monotonicMicros } from './support/load.js';
import { positiveInteger } from './support/options.js';
import { loadShop, type ShopSize } from './support/shop-loader.js';
import { runTraffic, type TrafficEnd } from './support/traffic-load.js';

const WINDOW_MS = 10_000;
/** Windows before this are the daemon's warm-up: reported, not judged. */
const JUDGED_FROM_S = 30;
const P99_TARGET_MS = 10;
const GROWTH_TARGET_MIB_PER_MIN = 1;
const END_TO_MINUTE_TARGET = 1.2;
/** Memory by part is read this long into the run, and resident memory compared with it at the end. */
const MEMORY_AT_S = 60;
/**
 * A shop's many clients each send their own requests: a write waiting for its commit must not hold a
 * recommendation up in the load's pool, as it would with a connection or two per kind.
 */
const CONNECTIONS = 256;
const SIZES: Record<string, Omit<ShopSize, 'now'>> = {
  // bench/memory's soak: 20 events per user, sessions for 40% of the users.
  small: { items: 1_000, users: 200, sessions: 80, interactions: 4_000, days: 29 },
  // bench/memory's load.
  large: { items: 100_000, users: 100_000, sessions: 40_000, interactions: 2_000_000, days: 29 },
};
const BARE_ROUTE = fileURLToPath(new URL('./bare-route.js', import.meta.url));
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    rate: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '1800' },
    'baseline-seconds': { type: 'string', default: '60' },
    'trace-gc': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
  // Not strict: bench/run forwards the same arguments to every benchmark.
  strict: false,
});
const sizeName = String(values.size);
if (!(sizeName in SIZES)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}`);
const options = Object.freeze({
  size: SIZES[sizeName],
  rate: positiveInteger('--rate', values.rate),
  seconds: positiveInteger('--seconds', values.seconds),
  baselineSeconds: positiveInteger('--baseline-seconds', values['baseline-seconds']),
  traceGc: values['trace-gc'] === true,
  profile: values.profile === true,
  json: typeof values.json === 'string' ? values.json : undefined,
});

// The bare route's first window is its warm-up.
if (options.baselineSeconds < (2 * WINDOW_MS) / 1000) {
  throw new Error(`--baseline-seconds must be at least ${(2 * WINDOW_MS) / 1000}`);
}

const interrupted = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => interrupted.abort());

/** Figures that are judged on the windows after the warm-up: the median and the worst window. */
function summarizeWindows(windows: readonly LatencyWindow[]) {
  const judged = windows.filter((window) => window.startS >= JUDGED_FROM_S);
  const of = (pick: (window: LatencyWindow) => number) => ({
    median: median(judged.map(pick)),
    max: Math.max(0, ...judged.map(pick)),
  });
  return {
    windows: judged.length,
    p50Ms: of((w) => w.all.p50Ms),
    p99Ms: of((w) => w.all.p99Ms),
    p999Ms: of((w) => w.all.p999Ms),
    recommendationsP99Ms: of((w) => w.recommendations.p99Ms),
    writesP99Ms: of((w) => w.writes.p99Ms),
  };
}

function formatFigures(label: string, f: { p50Ms: number; p99Ms: number; p999Ms: number }): string {
  return `${label} ${f.p50Ms}/${f.p99Ms}/${f.p999Ms}`;
}

/** The traffic against the bare routes, for the ratios: figures of its windows after the first. */
async function bareRoute(itemIds: readonly string[], userIds: readonly string[], when: string) {
  const bare = await startChildServer('bare route', [BARE_ROUTE], /bare route listening on (http:\/\/\S+)/);
  try {
    const seconds = options.baselineSeconds;
    const answers = new AnswerLog(Math.round(options.rate * seconds), options.rate, WINDOW_MS);
    const end = await runTraffic(
      {
        url: bare.url,
        headers: {},
        itemIds,
        userIds,
        rate: options.rate,
        seconds,
        connections: CONNECTIONS,
        reportEveryMs: 1_000,
      },
      { answered: (answered) => answers.add(answered) },
      interrupted.signal,
    );
    // Its first window is the load thread's warm-up.
    const windows = answers.windows(end.sent).slice(1);
    const figures = {
      when,
      seconds,
      loadAverage: loadavg()[0],
      all: latencyFigures(answers.latencyMs.subarray(answers.firstOf(1), end.sent)),
      medianWindowP99Ms: median(windows.map((w) => w.all.p99Ms)),
      maxWindowP99Ms: Math.max(0, ...windows.map((w) => w.all.p99Ms)),
      non200: answers.non200(end.sent),
      lateP99Ms: end.lateP99Ms,
    };
    console.log(
      `soak: bare route ${when}: ${formatFigures('p50/p99/p99.9', figures.all)} ms, window p99 median ` +
        `${figures.medianWindowP99Ms} max ${figures.maxWindowP99Ms} ms (load average ${figures.loadAverage.toFixed(2)})`,
    );
    return figures;
  } finally {
    await bare.stop();
  }
}

/** Interactions the tenant's store holds (GET /analytics/summary, over every day they may fall on). */
async function storedInteractions(bench: BenchDaemon): Promise<number> {
  const day = (offsetDays: number) =>
    new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
  const response = await request(`${bench.daemon.url}/analytics/summary?from=${day(-400)}&to=${day(2)}`, {
    headers: bench.headers,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200)
    throw new Error(`GET /analytics/summary answered ${response.statusCode}: ${text}`);
  return (JSON.parse(text) as { interactions: number }).interactions;
}

function windowLine(window: LatencyWindow, sample: WindowSample | undefined): string {
  const latency =
    `${formatFigures('all', window.all)} ${formatFigures('recs', window.recommendations)} ` +
    `${formatFigures('writes', window.writes)} ms`;
  if (!sample) return `soak: ${window.startS} s: ${latency}`;
  const gc = sample.collections;
  const events = [
    sample.builds.length > 0 && `built ${describeBuilds(sample.builds)}`,
    sample.swaps.length > 0 &&
      `swapped ${sample.swaps.map((swap) => `${swap.model} (${swap.ms} ms)`).join(', ')}`,
    gc.count > 0 && `gc ${gc.count} (${gc.markCompacts} mark-compact), longest ${gc.maxPauseMs} ms`,
    sample.warnings.length > 0 && `warnings: ${sample.warnings.join('; ')}`,
  ].filter(Boolean);
  return (
    `soak: ${window.startS} s: ${latency}; RSS ${sample.rssMiB} MiB; cores daemon ${sample.daemonCores} ` +
    `machine ${sample.machineCores}, load ${sample.loadAverage.toFixed(2)}; commits ${sample.commits.count} ` +
    `of ${sample.commits.meanMs} ms; cache hits ${sample.cacheHitRatio}; event loop blocked p99 ${sample.eventLoopBlockedMs.p99} max ${sample.eventLoopBlockedMs.max} ms` +
    (events.length > 0 ? `; ${events.join('; ')}` : '')
  );
}

/** Undefined: the run was too short to tell. */
const verdict = (met: boolean | undefined) => (met === undefined ? 'n/a' : met ? 'PASS' : 'FAIL');

/** Where the daemon's threads write their CPU profiles with `--profile` (node names them by thread). */
const PROFILE_DIR = path.join(ROOT, '.bench', 'soak-profiles');

/** Each thread's profile of the daemon, over the traffic (monotonic clock, µs). */
function printProfiles(fromUs: number, toUs: number): void {
  for (const name of readdirSync(PROFILE_DIR).filter((file) => file.endsWith('.cpuprofile'))) {
    const file = path.join(PROFILE_DIR, name);
    // CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile: the main thread's id is 0.
    const thread = name.split('.')[4] === '0' ? 'Daemon main thread' : `Daemon thread ${name.split('.')[4]}`;
    console.log(formatProfileSummary(summarizeProfile(file, ROOT, fromUs, toUs), file, thread));
  }
}

async function soak() {
  const size: ShopSize = { ...options.size, now: new Date() };
  const nodeFlags = options.traceGc ? ['--trace-gc'] : [];
  if (options.profile) {
    rmSync(PROFILE_DIR, { recursive: true, force: true });
    nodeFlags.push('--cpu-prof', '--cpu-prof-dir', PROFILE_DIR);
  }
  const bench = await startBenchDaemon('soak', {}, { logLevel: 'info', nodeFlags });
  try {
    const { daemon, headers } = bench;
    console.log(
      `soak: loading ${size.items.toLocaleString('en-US')} items and ${size.interactions.toLocaleString('en-US')} interactions...`,
    );
    const loadStarted = Date.now();
    const shop = await loadShop(daemon.url, headers, size);
    const loadSeconds = Math.round((Date.now() - loadStarted) / 1000);
    // The models the traffic ranks from (docs/guide.md, "Recommendations": none of its routes reads vectors,
    // whose build after a large catalog's load may still run, as it would in production).
    await waitForModels(daemon, ['cooccurrence', 'ease'], {
      cooccurrence: size.interactions,
      ease: size.interactions,
    });
    await waitForQuiet(daemon);
    const baselineBefore = await bareRoute(shop.itemIds, shop.userIds, 'before');

    const storedBefore = await storedInteractions(bench);
    const memory = [
      describeMemory('start', mib(procStatus(daemon.pid, 'VmRSS')), await memoryReport(daemon)),
    ];
    const sampler = new Sampler(bench, await scrapeMetrics(daemon.url), WINDOW_MS);
    const answers = new AnswerLog(Math.round(options.rate * options.seconds), options.rate, WINDOW_MS);
    console.log(
      `soak: ${options.rate} requests/s for ${options.seconds} s on the ${sizeName} tenant ` +
        `(loaded in ${loadSeconds} s; ${storedBefore.toLocaleString('en-US')} interactions stored; ` +
        `load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')})`,
    );

    let printed = 0;
    const printComplete = (all: boolean) => {
      for (; printed < sampler.samples.length && (all || answers.complete(printed)); printed++) {
        console.log(windowLine(answers.window(printed), sampler.samples[printed]));
      }
    };

    const progress: { startedAt?: number; startedUs?: number; end?: TrafficEnd } = {};
    const traffic = runTraffic(
      {
        url: daemon.url,
        headers,
        itemIds: shop.itemIds,
        userIds: shop.userIds,
        rate: options.rate,
        seconds: options.seconds,
        connections: CONNECTIONS,
        reportEveryMs: 1_000,
      },
      {
        started: (at) => {
          progress.startedAt = at;
          progress.startedUs = monotonicMicros();
        },
        answered: (answered) => answers.add(answered),
      },
      interrupted.signal,
    ).then((end) => (progress.end = end));
    // A window is sampled as it ends.
    let memoryAtMinute: Record<string, unknown> | undefined;
    while (progress.end === undefined) {
      await sleep(200);
      const windowEnd = (progress.startedAt ?? Infinity) + (sampler.samples.length + 1) * WINDOW_MS;
      if (Date.now() < windowEnd || progress.end !== undefined) continue;
      await sampler.sample();
      printComplete(false);
      if (memoryAtMinute === undefined && sampler.samples.length * WINDOW_MS >= MEMORY_AT_S * 1000) {
        const rssMiB = sampler.samples.at(-1)!.rssMiB;
        memoryAtMinute = describeMemory(`${MEMORY_AT_S} s`, rssMiB, await memoryReport(daemon));
      }
    }
    const end = await traffic;
    const trafficUs = { from: progress.startedUs ?? 0, to: monotonicMicros() };
    answers.sent = end.sent;
    // The last window, cut short or not, ends with the traffic.
    if (sampler.samples.length * WINDOW_MS < answers.dueMs(end.sent)) await sampler.sample();
    printComplete(true);
    const windows = answers.windows(end.sent);

    memory.push(...(memoryAtMinute ? [memoryAtMinute] : []));
    memory.push(describeMemory('end', mib(procStatus(daemon.pid, 'VmRSS')), await memoryReport(daemon)));
    const storedAfter = await storedInteractions(bench);
    const builds = buildsSince(await modelBuilds(daemon.url), parseModelBuilds(sampler.startMetrics));
    return {
      shop,
      loadSeconds,
      baselineBefore,
      windows,
      samples: sampler.samples,
      answers,
      end,
      memory,
      storedBefore,
      storedAfter,
      builds,
      trafficUs,
      startedAt: progress.startedAt ?? 0,
      events: sampler.events,
    };
  } finally {
    await bench.stop();
  }
}

const run = await soak();
// The daemon wrote its profiles as it stopped.
if (options.profile) printProfiles(run.trafficUs.from, run.trafficUs.to);
const baselineAfter = interrupted.signal.aborted
  ? undefined
  : await bareRoute(run.shop.itemIds, run.shop.userIds, 'after');

const { windows, samples, answers, end } = run;
const seconds = (end.sent * 1000) / options.rate / 1000;
const rss = samples.map((sample, w) => ({ s: ((w + 1) * WINDOW_MS) / 1000, value: sample.rssMiB }));
const rssAtMinute = rss.find((point) => point.s >= MEMORY_AT_S)?.value;
const rssEnd = rss.at(-1)?.value ?? 0;
const growth = Number(growthPerMinute(rss, seconds / 2).toFixed(2));
const endToMinute = rssAtMinute ? Number((rssEnd / rssAtMinute).toFixed(3)) : undefined;
const slow = windowsOver(windows, JUDGED_FROM_S, P99_TARGET_MS);
const summary = summarizeWindows(windows);
const non200 = answers.non200(end.sent);
const lost = run.storedBefore + answers.acknowledgedEvents - run.storedAfter;
const bareP99 = median([
  run.baselineBefore.medianWindowP99Ms,
  baselineAfter?.medianWindowP99Ms ?? run.baselineBefore.medianWindowP99Ms,
]);
const targets = {
  p99: {
    target: `p99 <= ${P99_TARGET_MS} ms in every window after ${JUDGED_FROM_S} s`,
    windowsOver: slow.length,
    met: slow.length === 0,
  },
  growth: {
    target: `RSS growth <= ${GROWTH_TARGET_MIB_PER_MIN} MiB/min over the second half`,
    mibPerMin: growth,
    met: growth <= GROWTH_TARGET_MIB_PER_MIN,
  },
  endRss: {
    target: `end RSS <= ${END_TO_MINUTE_TARGET} x RSS at ${MEMORY_AT_S} s`,
    ratio: endToMinute,
    met: endToMinute === undefined ? undefined : endToMinute <= END_TO_MINUTE_TARGET,
  },
  non200: {
    target: 'no answer but 200',
    count: non200,
    miscounted: answers.miscounted,
    met: non200 === 0 && answers.miscounted === 0,
  },
  stored: {
    target: 'every acknowledged interaction stored',
    acknowledged: answers.acknowledgedEvents,
    lost,
    met: lost === 0,
  },
};
const result = {
  bench: 'soak',
  size: sizeName,
  ...options.size,
  rate: options.rate,
  seconds: Number(seconds.toFixed(1)),
  loadSeconds: run.loadSeconds,
  sent: end.sent,
  lateP99Ms: end.lateP99Ms,
  ...(answers.firstFailure && { firstFailure: answers.firstFailure }),
  windowSummary: summary,
  byKind: answers.byKind(JUDGED_FROM_S),
  bareRoute: { before: run.baselineBefore, after: baselineAfter },
  ratios: {
    medianWindowP99: Number((summary.p99Ms.median / bareP99).toFixed(2)),
    maxWindowP99: Number((summary.p99Ms.max / bareP99).toFixed(2)),
  },
  rssMiB: {
    atMinute: rssAtMinute,
    end: rssEnd,
    max: Math.max(...rss.map((point) => point.value)),
    growthPerMinSecondHalf: growth,
    endToMinute,
  },
  builds: run.builds,
  memory: run.memory,
  stored: { before: run.storedBefore, after: run.storedAfter, acknowledged: answers.acknowledgedEvents },
  targets,
};
console.log(JSON.stringify(result));
console.log(
  `soak: window p99 median ${summary.p99Ms.median} ms, worst ${summary.p99Ms.max} ms (bare route ${bareP99} ms: ` +
    `${result.ratios.medianWindowP99}x, ${result.ratios.maxWindowP99}x); recommendations' p99 median ${summary.recommendationsP99Ms.median} ` +
    `worst ${summary.recommendationsP99Ms.max}, writes' ${summary.writesP99Ms.median} worst ${summary.writesP99Ms.max}`,
);
console.log(
  `soak: by kind after ${JUDGED_FROM_S} s, p50/p99/p99.9 ms: ` +
    Object.entries(result.byKind)
      .map(([kind, figures]) => formatFigures(kind, figures))
      .join(', '),
);
console.log(`soak: builds ${describeBuilds(run.builds)}`);
for (const target of Object.values(targets)) {
  console.log(
    `soak: ${verdict(target.met)} ${target.target}: ${JSON.stringify({ ...target, target: undefined, met: undefined })}`,
  );
}
if (options.json) {
  writeFileSync(
    options.json,
    JSON.stringify(
      {
        ...result,
        windows: windows.map((window, w) => ({ ...window, ...samples[w] })),
        // For a closer look at the slow windows: each second's figures, and the daemon's events.
        perSecond: answers.windows(end.sent, 1_000),
        events: run.events.map((event) => ({ ...event, atS: (event.atMs - run.startedAt) / 1000 })),
      },
      null,
      1,
    ),
  );
  console.log(`soak: windows written to ${options.json}`);
}
