/**
 * Memory (docs/memory.md): where a daemon's resident memory goes, and whether it stays flat.
 *
 * - load: a daemon is loaded through the HTTP API with a generated shop (100,000 items, then 2,000,000
 *   interactions), and measured once it is idle after each step and its model builds: resident memory
 *   (VmRSS, and VmHWM for the peak), the V8 heaps of its event-loop and ranking threads, DuckDB's own
 *   count, and what the serving state holds (GET /debug/memory). Then a daemon restarted on the same data
 *   dir. Judged against 600 MiB with the ranking thread on.
 * - soak: a small tenant (1,000 items, 200 users) under a mix of 70% recommendations, 25% single-event
 *   interactions and 5% item upserts, first as fast as it answers (16 connections, 15 s), then for
 *   `--soak` seconds at half that rate (or `--rate`), resident memory read every 5 s. Judged on the
 *   growth over the second half: under 5%.
 *
 *   npm run build && node dist/bench/memory.js [--items 100000] [--interactions 2000000] [--soak 600]
 *     [--rate N] [--parts load,soak]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { generateInteractions, generateShop } from '../fixtures/shop.js';
import { OPERATOR_KEY, serveCommand, startBenchDaemon } from './support/bench-daemon.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import {
  describeMemory,
  memoryReport,
  MIB,
  mib,
  procStatus,
  waitForModels,
  waitForQuiet,
  type MemoryReport,
} from './support/daemon-memory.js';
import { median } from './support/latency-windows.js';
import { positiveInteger } from './support/options.js';
import { loadInteractions, loadItems, type ShopSize } from './support/shop-loader.js';
import { shopTraffic, type ShopRequest } from './support/shop-traffic.js';
import { runTraffic } from './support/traffic-load.js';

const TARGET_RSS_MIB = 600;
const TARGET_GROWTH = 0.05;
/** As bench/serve: 20 events per user on average, sessions for 40% of the users. */
const INTERACTIONS_PER_USER = 20;
const SESSIONS_PER_USER = 0.4;
/** How long the heap of a daemon must stay level before it is measured (see settledSample). */
const SETTLE_MS = 60_000;
const SOAK_CONNECTIONS = 16;
const MAX_RATE_SECONDS = 15;
const SAMPLE_EVERY_MS = 5_000;

const { values } = parseArgs({
  args: process.argv.slice(2),
  // Not strict: bench/run forwards the same arguments to every benchmark.
  strict: false,
  options: {
    items: { type: 'string', default: '100000' },
    interactions: { type: 'string', default: '2000000' },
    soak: { type: 'string', default: '600' },
    rate: { type: 'string' },
    'soak-items': { type: 'string', default: '1000' },
    'soak-users': { type: 'string', default: '200' },
    parts: { type: 'string', default: 'load,soak' },
  },
});
const options = {
  items: positiveInteger('--items', values.items),
  interactions: positiveInteger('--interactions', values.interactions),
  soakSeconds: positiveInteger('--soak', values.soak),
  rate: values.rate === undefined ? undefined : positiveInteger('--rate', values.rate),
  soakItems: positiveInteger('--soak-items', values['soak-items']),
  soakUsers: positiveInteger('--soak-users', values['soak-users']),
  parts: String(values.parts).split(','),
};

interface Sample {
  rssMiB: number;
  report: MemoryReport;
}

/**
 * The daemon's memory once it is quiet and its heap has settled: V8 gives back what a load left behind
 * some time after it, when it finds the process idle. Read every 5 s until the event-loop thread's heap
 * went SETTLE_MS without shrinking by more than 5% (at most 4 minutes).
 */
async function settledSample(daemon: ChildServer): Promise<Sample> {
  await waitForQuiet(daemon);
  const deadline = Date.now() + 4 * 60_000;
  let report = await memoryReport(daemon);
  let low = report.heaps.eventLoop.used;
  let steadySince = Date.now();
  while (Date.now() - steadySince < SETTLE_MS && Date.now() < deadline) {
    await sleep(5_000);
    report = await memoryReport(daemon);
    const used = report.heaps.eventLoop.used;
    if (used < 0.95 * low) steadySince = Date.now();
    low = Math.min(low, used);
  }
  return { rssMiB: mib(procStatus(daemon.pid, 'VmRSS')), report };
}

async function loadPart(): Promise<boolean> {
  const users = Math.max(1_000, Math.round(options.interactions / INTERACTIONS_PER_USER));
  const size: ShopSize = {
    items: options.items,
    users,
    sessions: Math.round(users * SESSIONS_PER_USER),
    interactions: options.interactions,
    // Inside the 30-day history and popularity windows for the whole run.
    days: 29,
    now: new Date(),
  };
  const bench = await startBenchDaemon('memory');
  let restarted: ChildServer | undefined;
  try {
    const { daemon, headers } = bench;
    const empty = await settledSample(daemon);
    console.log(
      `memory: empty tenant ${empty.rssMiB} MiB; loading ${options.items.toLocaleString('en-US')} items`,
    );

    await loadItems(daemon.url, headers, size);
    // A build from nine tenths of the items or more: one that started while the last items arrived is
    // not redone for them (the daemon rebuilds a model once it is more than 10% behind), and the daemon
    // holds their vectors beside the model's (docs/guide.md, "Vectors and search").
    await waitForModels(daemon, ['vectors'], { vectors: options.items });
    const withItems = await settledSample(daemon);
    console.log(
      `memory: ${withItems.rssMiB} MiB with the items; loading ${options.interactions.toLocaleString('en-US')} interactions`,
    );

    const started = Date.now();
    await loadInteractions(daemon.url, headers, size);
    const loadSeconds = (Date.now() - started) / 1000;
    const peakRss = procStatus(daemon.pid, 'VmHWM');
    const sources = {
      cooccurrence: options.interactions,
      ease: options.interactions,
      vectors: options.items,
    };
    await waitForModels(daemon, ['cooccurrence', 'ease', 'vectors'], sources);
    const loaded = await settledSample(daemon);
    console.log(
      `memory: ${loaded.rssMiB} MiB loaded (peak ${mib(peakRss)} MiB); restarting on the same data dir`,
    );

    await daemon.stop();
    restarted = await startChildServer(
      'daemon',
      serveCommand(['--port', '0', '--data-dir', bench.dataDir, '--log-level', 'warn']),
      /nextrec listening on (http:\/\/\S+)/,
      { NEXTREC_ADMIN_KEY: OPERATOR_KEY },
      15 * 60_000,
    );
    await waitForModels(restarted, ['cooccurrence', 'ease', 'vectors'], sources);
    const again = await settledSample(restarted);

    const perItem = ((withItems.rssMiB - empty.rssMiB) * MIB) / options.items;
    const perInteraction = ((loaded.rssMiB - withItems.rssMiB) * MIB) / options.interactions;
    const met = loaded.rssMiB <= TARGET_RSS_MIB && again.rssMiB <= TARGET_RSS_MIB;
    console.log(
      JSON.stringify({
        bench: 'memory',
        part: 'load',
        items: options.items,
        interactions: options.interactions,
        loadSeconds: Math.round(loadSeconds),
        rssMiB: {
          empty: empty.rssMiB,
          items: withItems.rssMiB,
          loaded: loaded.rssMiB,
          restarted: again.rssMiB,
        },
        peakRssMiB: mib(peakRss),
        bytesPerItem: Math.round(perItem),
        bytesPerInteraction: Math.round(perInteraction),
        duckdb: { memoryLimit: loaded.report.duckdb.memoryLimit, threads: loaded.report.duckdb.threads },
        steps: [
          describeMemory('empty', empty.rssMiB, empty.report),
          describeMemory('items', withItems.rssMiB, withItems.report),
          describeMemory('loaded', loaded.rssMiB, loaded.report),
          describeMemory('restarted', again.rssMiB, again.report),
        ],
        targetRssMiB: TARGET_RSS_MIB,
        met,
      }),
    );
    console.log(
      `resident memory: empty ${empty.rssMiB}, with ${options.items.toLocaleString('en-US')} items ${withItems.rssMiB}, ` +
        `with ${options.interactions.toLocaleString('en-US')} interactions ${loaded.rssMiB} (peak ${mib(peakRss)}), ` +
        `restarted ${again.rssMiB} MiB (target <= ${TARGET_RSS_MIB}): ${met ? 'met' : 'NOT met'}; ` +
        `${Math.round(perItem)} bytes per item, ${Math.round(perInteraction)} bytes per interaction`,
    );
    return met;
  } finally {
    await restarted?.stop();
    await bench.stop();
  }
}

interface RunFigures {
  answered: number;
  failed: number;
  /** How late after its due time an open-loop run sent a request, p99. */
  lateP99Ms?: number;
  firstFailure?: string;
}

async function send(
  pool: Pool,
  headers: Record<string, string>,
  next: ShopRequest,
): Promise<string | undefined> {
  try {
    const response = await pool.request({
      method: next.method,
      path: next.path,
      headers: next.body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: next.body,
    });
    const text = await response.body.text();
    return response.statusCode === 200 ? undefined : `HTTP ${response.statusCode}: ${text.slice(0, 300)}`;
  } catch (error) {
    return `request failed: ${String(error)}`;
  }
}

/** As many requests as `connections` clients get answered in `seconds`, one at a time each. */
async function closedLoop(
  pool: Pool,
  headers: Record<string, string>,
  next: () => ShopRequest,
  seconds: number,
): Promise<RunFigures> {
  const figures: RunFigures = { answered: 0, failed: 0 };
  const end = Date.now() + seconds * 1000;
  const client = async () => {
    while (Date.now() < end) {
      const failure = await send(pool, headers, next());
      if (failure === undefined) figures.answered++;
      else {
        figures.failed++;
        figures.firstFailure ??= failure;
      }
    }
  };
  await Promise.all(Array.from({ length: SOAK_CONNECTIONS }, client));
  return figures;
}

/**
 * `rate` requests a second for `seconds`, open-loop (support/traffic-load.ts); resident memory sampled
 * every 5 s meanwhile.
 */
async function openLoop(
  daemon: ChildServer,
  headers: Record<string, string>,
  shop: { itemIds: string[]; userIds: string[] },
  rate: number,
  seconds: number,
): Promise<{ figures: RunFigures; samples: { s: number; rssMiB: number }[] }> {
  const figures: RunFigures = { answered: 0, failed: 0 };
  const samples: { s: number; rssMiB: number }[] = [];
  let startedAt = Date.now();
  const sample = () =>
    samples.push({
      s: Math.round((Date.now() - startedAt) / 1000),
      rssMiB: mib(procStatus(daemon.pid, 'VmRSS')),
    });
  const timer = setInterval(sample, SAMPLE_EVERY_MS);
  const traffic = { url: daemon.url, headers, ...shop, rate, seconds, connections: SOAK_CONNECTIONS };
  const end = await runTraffic(
    { ...traffic, reportEveryMs: 1_000 },
    {
      started: (at) => (startedAt = at),
      answered: (answered) => {
        const ok = answered.status.filter((status) => status === 200).length - answered.miscounted;
        figures.answered += ok;
        figures.failed += answered.status.length - ok;
        figures.firstFailure ??= answered.firstFailure;
      },
    },
  ).finally(() => clearInterval(timer));
  sample();
  figures.lateP99Ms = end.lateP99Ms;
  return { figures, samples };
}

async function soakPart(): Promise<boolean> {
  const users = options.soakUsers;
  const size: ShopSize = {
    items: options.soakItems,
    users,
    sessions: Math.round(users * SESSIONS_PER_USER),
    interactions: users * INTERACTIONS_PER_USER,
    days: 29,
    now: new Date(),
  };
  const bench = await startBenchDaemon('soak');
  const pool = new Pool(bench.daemon.url, { connections: SOAK_CONNECTIONS * 2 });
  try {
    const { daemon, headers } = bench;
    await loadItems(daemon.url, headers, size);
    await loadInteractions(daemon.url, headers, size);
    const itemIds = generateShop({ ...size, interactions: 0 }).items.map((item) => item.externalId);
    const userIds = [...new Set(Array.from(generateInteractions(size), (event) => event.userId))].filter(
      (id): id is string => id !== undefined,
    );
    await waitForModels(daemon, ['cooccurrence'], { cooccurrence: size.interactions }, 1);
    const next = shopTraffic(itemIds, userIds);

    const fastest = await closedLoop(pool, headers, next, MAX_RATE_SECONDS);
    const maxRps = fastest.answered / MAX_RATE_SECONDS;
    const rate = options.rate ?? Math.max(1, Math.floor(maxRps / 2));
    console.log(
      `memory soak: ${Math.round(maxRps)} requests/s at most (${SOAK_CONNECTIONS} connections); ` +
        `${options.soakSeconds} s at ${rate}/s`,
    );

    const { figures: run, samples } = await openLoop(
      daemon,
      headers,
      { itemIds, userIds },
      rate,
      options.soakSeconds,
    );
    const at = (from: number, to: number) =>
      median(samples.filter((sample) => sample.s >= from && sample.s <= to).map((sample) => sample.rssMiB));
    const half = options.soakSeconds / 2;
    // Each point is the median of the samples of 30 s around it, so one garbage collection does not decide.
    const start = at(0, 30);
    const middle = at(half - 15, half + 15);
    const end = at(options.soakSeconds - 30, options.soakSeconds);
    const growth = (end - middle) / middle;
    const report = await memoryReport(daemon);
    const met = growth < TARGET_GROWTH && run.failed === 0;
    const perMinute = samples.filter((sample) => sample.s % 60 === 0 || sample === samples.at(-1));
    console.log(
      JSON.stringify({
        bench: 'memory',
        part: 'soak',
        seconds: options.soakSeconds,
        maxRps: Math.round(maxRps),
        rate,
        answered: run.answered,
        failed: run.failed,
        lateP99Ms: run.lateP99Ms,
        ...(run.firstFailure && { firstFailure: run.firstFailure }),
        rssMiB: { start, middle, end },
        lastHalfGrowth: Number(growth.toFixed(4)),
        curve: perMinute.map((sample) => [sample.s, sample.rssMiB]),
        after: describeMemory('after the soak', end, report),
        targetGrowth: TARGET_GROWTH,
        met,
      }),
    );
    console.log(
      `soak: RSS ${start} MiB at the start, ${middle} half-way, ${end} at the end: ` +
        `${(growth * 100).toFixed(1)}% over the second half (target < ${TARGET_GROWTH * 100}%): ${met ? 'met' : 'NOT met'}`,
    );
    return met;
  } finally {
    await pool.close();
    await bench.stop();
  }
}

let met = true;
if (options.parts.includes('load')) met = (await loadPart()) && met;
if (options.parts.includes('soak')) met = (await soakPart()) && met;
if (!met) process.exitCode = 1;
