/**
 * Memory (README, "Memory"): where a daemon's resident memory goes, and whether it stays flat.
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
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Pool, request } from 'undici';
import { Rng } from '../fixtures/prng.js';
import { generateInteractions, generateShop } from '../fixtures/shop.js';
import { OPERATOR_KEY, serveCommand, startBenchDaemon } from './support/bench-daemon.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { positiveInteger } from './support/options.js';
import { loadInteractions, loadItems, type ShopSize } from './support/shop-loader.js';

const MIB = 1024 * 1024;
const TARGET_RSS_MIB = 600;
const TARGET_GROWTH = 0.05;
/** As bench/serve: 20 events per user on average, sessions for 40% of the users. */
const INTERACTIONS_PER_USER = 20;
const SESSIONS_PER_USER = 0.4;
/** A build over millions of interactions takes a while on a shared 2-core machine. */
const MODEL_TIMEOUT_MS = 20 * 60_000;
/** How long the heap of a daemon must stay level before it is measured (see settledSample). */
const SETTLE_MS = 60_000;
const SOAK_CONNECTIONS = 16;
const MAX_RATE_SECONDS = 15;
const SAMPLE_EVERY_MS = 5_000;
/** An open-loop run sends no more than this many requests at once; those beyond are counted as late. */
const MAX_IN_FLIGHT = 256;

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

/** The daemon's GET /debug/memory (see src/server/routes/memory.ts). */
interface MemoryReport {
  process: { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  heaps: {
    eventLoop: { used: number; total: number; external: number };
    rankingThread: { used: number; total: number; external: number } | null;
  };
  duckdb: { memoryLimit: string; threads: number; memory: Record<string, number>; temporary: number };
  tenants: Record<
    string,
    {
      items: number;
      identities: number;
      historyEvents: number;
      counterEvents: { recent: number; geo: number };
      cached: { documents: number; rendered: number; attributeColumns: number };
      perThread: Record<string, number>;
      shared: Record<string, number>;
      models: Record<string, { builtAt: number; source: number }>;
    }
  >;
}

function mib(bytes: number): number {
  return Number((bytes / MIB).toFixed(1));
}

/** A field of /proc/<pid>/status in bytes. */
function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

async function memoryReport(daemon: ChildServer): Promise<MemoryReport> {
  const response = await request(`${daemon.url}/debug/memory`, { headers: { 'x-api-key': OPERATOR_KEY } });
  const text = await response.body.text();
  if (response.statusCode !== 200)
    throw new Error(`GET /debug/memory answered ${response.statusCode}: ${text}`);
  return JSON.parse(text) as MemoryReport;
}

/**
 * Resolves once the tenant's models are loaded, built from at least `share` of what it holds
 * (interactions; items for vectors), and no newer version arrived for 10 s.
 */
async function waitForModels(
  daemon: ChildServer,
  models: readonly string[],
  sources: Record<string, number>,
  share = 0.9,
): Promise<void> {
  const deadline = Date.now() + MODEL_TIMEOUT_MS;
  let last = '';
  let steadySince = Date.now();
  while (Date.now() < deadline) {
    const tenant = (await memoryReport(daemon)).tenants.bench;
    const loaded = models.map((model) => tenant.models[model]);
    const built = loaded.every((model, i) => model.source >= share * sources[models[i]]);
    const versions = JSON.stringify(loaded);
    if (versions !== last) {
      last = versions;
      steadySince = Date.now();
    }
    if (built && Date.now() - steadySince >= 10_000) return;
    await sleep(2_000);
  }
  throw new Error(`the models ${models.join(', ')} were not built in ${MODEL_TIMEOUT_MS / 60_000} min`);
}

/** Resolves once the daemon used less than a twentieth of a core over 5 s (at most after 5 min). */
async function waitForQuiet(daemon: ChildServer): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  let before = daemon.cpuSeconds();
  while (before !== undefined && Date.now() < deadline) {
    await sleep(5_000);
    const after = daemon.cpuSeconds()!;
    if (after - before < 0.25) return;
    before = after;
  }
}

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

function describe(label: string, sample: Sample): Record<string, unknown> {
  const { report } = sample;
  const tenant = report.tenants.bench;
  return {
    label,
    rssMiB: sample.rssMiB,
    heapUsedMiB: {
      eventLoop: mib(report.heaps.eventLoop.used),
      rankingThread: report.heaps.rankingThread ? mib(report.heaps.rankingThread.used) : null,
    },
    heapTotalMiB: {
      eventLoop: mib(report.heaps.eventLoop.total),
      rankingThread: report.heaps.rankingThread ? mib(report.heaps.rankingThread.total) : null,
    },
    arrayBuffersMiB: mib(report.process.arrayBuffers),
    duckdbMiB: Object.fromEntries(
      Object.entries(report.duckdb.memory).map(([tag, bytes]) => [tag, mib(bytes)]),
    ),
    ...(tenant && {
      state: {
        items: tenant.items,
        identities: tenant.identities,
        historyEvents: tenant.historyEvents,
        perThreadMiB: Object.fromEntries(Object.entries(tenant.perThread).map(([k, v]) => [k, mib(v)])),
        sharedMiB: Object.fromEntries(Object.entries(tenant.shared).map(([k, v]) => [k, mib(v)])),
        cached: tenant.cached,
      },
    }),
  };
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
    // holds their vectors beside the model's (README, "Vectors and search").
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
          describe('empty', empty),
          describe('items', withItems),
          describe('loaded', loaded),
          describe('restarted', again),
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

interface SoakRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** The soak's mix: 70% recommendations, 25% single-event interactions, 5% item upserts. */
function soakMix(itemIds: string[], userIds: string[]): () => SoakRequest {
  const rng = new Rng(11);
  const pick = (ids: string[]) => ids[rng.int(ids.length)];
  return () => {
    const roll = rng.next();
    if (roll < 0.35) {
      return {
        method: 'POST',
        path: '/recommendations',
        body: JSON.stringify({ logicType: 'user-to-item', userId: pick(userIds), count: 10 }),
      };
    }
    if (roll < 0.7) {
      return {
        method: 'GET',
        path: `/recommendations/item-to-item/${encodeURIComponent(pick(itemIds))}?count=10`,
      };
    }
    if (roll < 0.95) {
      const type = rng.chance(0.8) ? 'view' : rng.chance(0.7) ? 'cart' : 'purchase';
      const interaction = { userId: pick(userIds), itemId: pick(itemIds), type };
      return {
        method: 'POST',
        path: '/ingestion/interactions',
        body: JSON.stringify({ interactions: [interaction] }),
      };
    }
    const item = { externalId: pick(itemIds), attributes: { stock: rng.int(50), price: 5 + rng.int(200) } };
    return { method: 'POST', path: '/ingestion/items', body: JSON.stringify({ items: [item] }) };
  };
}

interface RunFigures {
  answered: number;
  failed: number;
  /** Requests an open-loop run could not send in time: MAX_IN_FLIGHT were waiting. */
  late: number;
  firstFailure?: string;
}

async function send(
  pool: Pool,
  headers: Record<string, string>,
  next: SoakRequest,
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
  next: () => SoakRequest,
  seconds: number,
): Promise<RunFigures> {
  const figures: RunFigures = { answered: 0, failed: 0, late: 0 };
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

/** `rate` requests a second for `seconds`, sent on time whatever the answers take; `sample` every 5 s. */
async function openLoop(
  pool: Pool,
  headers: Record<string, string>,
  next: () => SoakRequest,
  rate: number,
  seconds: number,
  sample: (elapsedS: number) => void,
): Promise<RunFigures> {
  const figures: RunFigures = { answered: 0, failed: 0, late: 0 };
  const started = performance.now();
  let sent = 0;
  let inFlight = 0;
  let nextSample = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - started;
      if (elapsed >= nextSample) {
        sample(Math.round(elapsed / 1000));
        nextSample += SAMPLE_EVERY_MS;
      }
      const due = Math.min(rate * seconds, Math.floor((elapsed / 1000) * rate));
      for (; sent < due; sent++) {
        if (inFlight >= MAX_IN_FLIGHT) {
          figures.late++;
          continue;
        }
        inFlight++;
        void send(pool, headers, next()).then((failure) => {
          inFlight--;
          if (failure === undefined) figures.answered++;
          else {
            figures.failed++;
            figures.firstFailure ??= failure;
          }
        });
      }
      if (elapsed >= seconds * 1000 && inFlight === 0) {
        clearInterval(tick);
        sample(Math.round(elapsed / 1000));
        resolve();
      }
    }, 5);
  });
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
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
    const next = soakMix(itemIds, userIds);

    const fastest = await closedLoop(pool, headers, next, MAX_RATE_SECONDS);
    const maxRps = fastest.answered / MAX_RATE_SECONDS;
    const rate = options.rate ?? Math.max(1, Math.floor(maxRps / 2));
    console.log(
      `memory soak: ${Math.round(maxRps)} requests/s at most (${SOAK_CONNECTIONS} connections); ` +
        `${options.soakSeconds} s at ${rate}/s`,
    );

    const samples: { s: number; rssMiB: number }[] = [];
    const run = await openLoop(pool, headers, next, rate, options.soakSeconds, (s) =>
      samples.push({ s, rssMiB: mib(procStatus(daemon.pid, 'VmRSS')) }),
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
        late: run.late,
        ...(run.firstFailure && { firstFailure: run.firstFailure }),
        rssMiB: { start, middle, end },
        lastHalfGrowth: Number(growth.toFixed(4)),
        curve: perMinute.map((sample) => [sample.s, sample.rssMiB]),
        after: describe('after the soak', { rssMiB: end, report }),
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
