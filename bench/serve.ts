/**
 * Serving benchmark: a daemon loaded with a generated shop answers item-to-item and user-to-item requests
 * (filter, two boosters, diversity) under autocannon load, uncached and cached, each case between runs of
 * a bare Fastify route answering a fixed 10-item list, in rounds. Prints one JSON line per case (median
 * ratio over the rounds) and a table of every run.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Rng } from '../fixtures/prng.js';
import { openCurrent } from '../src/artifacts/open.js';
import { publishModel } from '../src/artifacts/publish.js';
import { serveCommand } from './support/bench-daemon.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { formatProfileSummary, summarizeProfile } from './support/cpu-profile.js';
import { waitForDaemonIdle } from './support/daemon-memory.js';
import {
  checkFirstAnswer,
  runLoad,
  type LoadFigures,
  type LoadSpec,
  type VaryingPart,
} from './support/http-load.js';
import { measureBatchLatency, type BatchRequestSpec } from './support/batch-latency.js';
import { machineBusySeconds } from './support/machine-cpu.js';
import { loadShop, postJson, type LoadedShop } from './support/shop-loader.js';
import { positiveInteger } from './support/options.js';
import { median } from './support/quantile.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BARE_ROUTE = fileURLToPath(new URL('./support/bare-recommendations.js', import.meta.url));
const PROFILE_DIR = path.join(ROOT, '.bench');
const PROFILE_NAME = 'serve-daemon.cpuprofile';
/** Written next to a kept store: what a later run needs to reuse it. */
const KEPT_STORE_FILE = 'bench-store.json';

const TENANT_ID = 'bench';
const CONNECTIONS = 50;
const WARMUP_S = 2;
const BARE_WARMUP_S = 5;
const COUNT = 10;
const PROJECTION = ['attributes.name', 'attributes.price'];
/** Seeds the cached cases repeat: few enough that the warm-up puts every one of them in the cache. */
const CACHED_SEEDS = 100;
/** Of the bare route's rate: what a shop asks of personal lists (docs/benchmarks.md, `bench/serve`). */
const UNCACHED_TARGET = 0.5;
const CACHED_TARGET = 0.9;
const P99_TARGET_MS = 20;
/** A build over millions of interactions takes a while on a shared 2-core machine. */
const MODEL_TIMEOUT_MS = 15 * 60_000;

/** 20 events per user on average; the generator skews activity, so the heaviest have hundreds. */
const INTERACTIONS_PER_USER = 20;
const SESSIONS_PER_USER = 0.4;

const SCENARIO_RULES = {
  filter: `'stock' > 0`,
  boosters: [
    `boost by 1.5 where 'brand' in {"Linea", "Pace", "Corso", "Maison Verre"}`,
    `boost by 1.2 where 'price' < 50`,
  ],
  constraints: { maxPerCategory: 3 },
};

type LogicType = 'item-to-item' | 'similar-products' | 'user-to-item';

interface Case {
  name: string;
  logicType: LogicType;
  cached: boolean;
  /** New versions of the models are published while the case runs (see swapDuringRun). */
  swapping?: boolean;
}

/** Cases of one method are adjacent, so that one bare run lies between them (see measureAll). */
const CASES: Case[] = [
  { name: 'item-to-item uncached', logicType: 'item-to-item', cached: false },
  { name: 'item-to-item cached', logicType: 'item-to-item', cached: true },
  { name: 'similar-products uncached', logicType: 'similar-products', cached: false },
  { name: 'similar-products cached', logicType: 'similar-products', cached: true },
  { name: 'user-to-item uncached', logicType: 'user-to-item', cached: false },
  { name: 'user-to-item cached', logicType: 'user-to-item', cached: true },
  { name: 'user-to-item uncached, models swapped', logicType: 'user-to-item', cached: false, swapping: true },
];

/**
 * The batch part (docs/benchmarks.md): a page's three lists (item-to-item, similar-products, user-to-item)
 * as one `POST /batch` against the same three requests sent on their own; cached and uncached.
 */
const BATCH_CASES = [
  { name: 'batch of 3, cached', cached: true },
  { name: 'batch of 3, uncached', cached: false },
] as const;
const BATCH_ITERATIONS = 300;

const EXPECTED_ALGORITHM: Record<LogicType, string> = {
  'item-to-item': 'co-occurrence',
  'similar-products': 'vector-similarity',
  'user-to-item': 'weighted-history',
};

interface Options {
  items: number;
  interactions: number;
  durationS: number;
  /** The case whose window the daemon's CPU profile summary covers, if profiling. */
  profile?: string;
  /** Only the cases whose names contain this. */
  cases?: string;
  /** A data dir kept between runs: loaded once, reused while its sizes match. */
  store?: string;
  /** Every case is measured this many times; targets are judged on the medians. */
  rounds: number;
}

function parseOptions(argv: string[]): Options {
  // Not strict: bench/run forwards the same arguments to every benchmark.
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      items: { type: 'string', default: '100000' },
      interactions: { type: 'string', default: '2000000' },
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      profile: { type: 'string' },
      cases: { type: 'string' },
      store: { type: 'string' },
    },
  });
  const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);
  const profile = text(values.profile);
  if (profile !== undefined && !CASES.some((c) => c.name === profile)) {
    throw new Error(`--profile takes a case name: ${CASES.map((c) => c.name).join(', ')}`);
  }
  return {
    items: positiveInteger('--items', values.items),
    interactions: positiveInteger('--interactions', values.interactions),
    durationS: positiveInteger('--duration', values.duration),
    rounds: positiveInteger('--rounds', values.rounds),
    profile,
    cases: text(values.cases),
    store: text(values.store),
  };
}

function startDaemon(dataDir: string, operatorKey: string, options: { logLevel: string; profile: boolean }) {
  const profiling = options.profile
    ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, '--cpu-prof-name', PROFILE_NAME]
    : [];
  return startChildServer(
    'daemon',
    serveCommand(['--port', '0', '--data-dir', dataDir, '--log-level', options.logLevel], profiling),
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: operatorKey },
  );
}

/** Loads the shop and the scenarios into a fresh store; returns the tenant's headers and the seeds. */
async function prepareStore(
  dataDir: string,
  operatorKey: string,
  options: Options,
): Promise<{ headers: Record<string, string>; shop: LoadedShop }> {
  const daemon = await startDaemon(dataDir, operatorKey, { logLevel: 'warn', profile: false });
  try {
    const tenant = { tenantId: TENANT_ID };
    const created = await postJson(`${daemon.url}/tenants`, { 'x-api-key': operatorKey }, tenant, 201);
    const headers = { 'x-tenant-id': TENANT_ID, 'x-api-key': (created as { apiKey: string }).apiKey };
    const started = Date.now();
    const users = Math.max(1_000, Math.round(options.interactions / INTERACTIONS_PER_USER));
    const shop = await loadShop(daemon.url, headers, {
      items: options.items,
      users,
      sessions: Math.round(users * SESSIONS_PER_USER),
      interactions: options.interactions,
      // Inside the 30-day history and popularity windows for the whole run.
      days: 29,
      now: new Date(),
    });
    console.log(`serve: loaded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    for (const logicType of ['item-to-item', 'similar-products', 'user-to-item'] as const) {
      await postJson(
        `${daemon.url}/scenarios`,
        headers,
        { slug: scenarioSlug(logicType), logicType, ...SCENARIO_RULES },
        201,
      );
    }
    return { headers, shop };
  } finally {
    await daemon.stop();
  }
}

function scenarioSlug(logicType: LogicType): string {
  return `bench-${logicType}`;
}

/** The models the bench tenant's requests rank from (the default algorithms'), which the daemon builds. */
const MODELS_IN_USE = ['cooccurrence', 'ease', 'vectors'] as const;

/**
 * Resolves once the daemon swapped in every model its requests use, built from all `interactions`. A
 * restarted daemon builds what its stored models lack, once, and logs each swap; nothing is written
 * afterwards, so no other build runs while cases are measured and cached lists never go stale. (The
 * answers alone can't tell: without a model, item-to-item falls back to category popularity under the same
 * algorithm name.)
 */
async function waitForModels(daemon: ChildServer, interactions: number, items: number): Promise<void> {
  const deadline = Date.now() + MODEL_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const complete = new Set<string>();
    // The last piece may be a line still being written.
    for (const line of daemon.output().split('\n').slice(0, -1)) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as {
        msg?: string;
        tenantId?: string;
        model?: string;
        source?: { interactions: number; items: number };
      };
      if (entry.tenantId !== TENANT_ID) continue;
      if (entry.msg === 'model build failed' || entry.msg?.startsWith('model refused'))
        throw new Error(`model build failed: ${line}`);
      if (entry.msg !== 'model swapped in') continue;
      // Vectors are built from the items, the other models from the interactions.
      const built =
        entry.model === 'vectors' ? entry.source!.items >= items : entry.source!.interactions >= interactions;
      if (built) complete.add(entry.model!);
    }
    if (MODELS_IN_USE.every((model) => complete.has(model))) return;
    await sleep(1_000);
  }
  throw new Error(`the models were not built in ${MODEL_TIMEOUT_MS / 60_000} min`);
}

/** When, into its timed run, the swapping case publishes new versions of the models. */
const SWAP_AT_MS = 3_000;

/**
 * Publishes the current versions of the bench tenant's models again, as new versions, SWAP_AT_MS into
 * the run, as a `nextrec build` from cron beside the daemon would, and resolves to the seconds until the
 * daemon logged the last of them swapped in.
 */
async function swapDuringRun(dataDir: string, daemon: ChildServer): Promise<number> {
  await sleep(SWAP_AT_MS);
  const published = new Map<string, number>();
  for (const model of MODELS_IN_USE) {
    const current = openCurrent(dataDir, TENANT_ID, model)!;
    const { parameters, source, shape, buildMs } = current.manifest;
    const names = Object.keys(current.manifest.files);
    const files = Object.fromEntries(names.map((name) => [name, current.file(name)]));
    const manifest = publishModel(dataDir, TENANT_ID, model, { files, parameters, source, shape }, buildMs);
    published.set(model, manifest.version);
  }
  const started = performance.now();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const swapped = daemon
      .output()
      .split('\n')
      .filter((line) => line.includes('"model swapped in"'))
      .map((line) => JSON.parse(line) as { model: string; version: number });
    const all = [...published].every(([model, version]) =>
      swapped.some((entry) => entry.model === model && entry.version === version),
    );
    if (all) return (performance.now() - started) / 1000;
    await sleep(100);
  }
  throw new Error('the daemon did not swap the published versions in within a minute');
}

/** The same seeds in an order of their own, so that consecutive requests hit unrelated users or items. */
function shuffled(ids: string[]): string[] {
  const order = Array.from(ids.keys());
  new Rng(7).shuffle(order);
  return order.map((i) => ids[i]);
}

function itemSeededRequests(logicType: LogicType, itemIds: string[], noCache: boolean): VaryingPart[] {
  const query = new URLSearchParams({
    scenario: scenarioSlug(logicType),
    count: String(COUNT),
    includedProperties: PROJECTION.join(','),
    ...(noCache && { noCache: 'true' }),
  });
  return itemIds.map((itemId) => ({
    path: `/recommendations/${logicType}/${encodeURIComponent(itemId)}?${query}`,
  }));
}

function userToItemRequests(userIds: string[], noCache: boolean): VaryingPart[] {
  return userIds.map((userId) => ({
    path: '/recommendations',
    body: JSON.stringify({
      scenario: scenarioSlug('user-to-item'),
      userId,
      count: COUNT,
      includedProperties: PROJECTION,
      ...(noCache && { noCache: true }),
    }),
  }));
}

function loadSpec(url: string, headers: Record<string, string>, shop: LoadedShop, testCase: Case): LoadSpec {
  const seeds = (ids: string[]) => (testCase.cached ? ids.slice(0, CACHED_SEEDS) : ids);
  const common = { url, connections: CONNECTIONS };
  if (testCase.logicType !== 'user-to-item') {
    return {
      ...common,
      method: 'GET',
      headers,
      requests: itemSeededRequests(testCase.logicType, seeds(shop.itemIds), !testCase.cached),
    };
  }
  return {
    ...common,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    requests: userToItemRequests(seeds(shop.userIds), !testCase.cached),
  };
}

/** One request of the case, checked (`checkFirstAnswer`). */
function checkAnswer(spec: LoadSpec, testCase: Case): Promise<void> {
  return checkFirstAnswer(spec, testCase.name, {
    count: COUNT,
    algorithm: EXPECTED_ALGORITHM[testCase.logicType],
    scenario: scenarioSlug(testCase.logicType),
  });
}

interface Measurement extends LoadFigures {
  /** CPU time over the timed run's wall time: of the server, of this process (the load generator)... */
  serverCores?: number;
  generatorCores: number;
  /** ...and of everything else on the machine. */
  otherCores?: number;
}

/** A warm-up whose figures are dropped (JIT, caches, connection setup), then the timed run. */
async function measure(server: ChildServer, spec: LoadSpec, durationS: number): Promise<Measurement> {
  await runLoad(spec, WARMUP_S);
  const serverBefore = server.cpuSeconds();
  const generatorBefore = process.cpuUsage();
  const machineBefore = machineBusySeconds();
  const figures = await runLoad(spec, durationS);
  const serverAfter = server.cpuSeconds();
  const generator = process.cpuUsage(generatorBefore);
  const machineAfter = machineBusySeconds();
  const seconds = (figures.endedUs - figures.startedUs) / 1e6;
  const serverCores =
    serverBefore === undefined || serverAfter === undefined
      ? undefined
      : (serverAfter - serverBefore) / seconds;
  const generatorCores = (generator.user + generator.system) / 1e6 / seconds;
  const machineCores =
    machineBefore === undefined || machineAfter === undefined
      ? undefined
      : (machineAfter - machineBefore) / seconds;
  return {
    ...figures,
    serverCores,
    generatorCores,
    otherCores:
      serverCores === undefined || machineCores === undefined
        ? undefined
        : Math.max(0, machineCores - serverCores - generatorCores),
  };
}

type Method = LoadSpec['method'];

/** The method of a case's requests: the user-to-item case posts bodies to the unified endpoint. */
function methodOf(testCase: Case): Method {
  return testCase.logicType === 'user-to-item' ? 'POST' : 'GET';
}

/** A case's run and the bare route's runs of the same method just before and just after it. */
interface CaseRuns {
  run: Measurement;
  bare: [Measurement, Measurement];
}

/**
 * Every case against the loaded daemon, each between two runs of the bare route of its own method (the
 * run after one case is the run before the next): the machine is shared and its speed drifts over
 * minutes, so a case is compared with the mean of its neighbours, and their spread shows how steady the
 * machine was. Reading and parsing a request body costs the daemon and the bare route alike, so each
 * case has the bare route of its own method as its baseline.
 */
async function measureAll(
  dataDir: string,
  daemon: ChildServer,
  headers: Record<string, string>,
  shop: LoadedShop,
  selected: Case[],
  options: Options,
): Promise<Map<string, CaseRuns[]>> {
  const started = performance.now();
  await waitForModels(daemon, options.interactions, options.items);
  console.log(
    `serve: ${MODELS_IN_USE.join(' and ')} in place ${((performance.now() - started) / 1000).toFixed(1)} s after the start`,
  );
  // After its model build the daemon still collects garbage and closes DuckDB work for a while, which
  // would slow the first baseline run and flatter the first case.
  await waitForDaemonIdle(daemon);
  const bare = await startChildServer('bare route', [BARE_ROUTE], /bare route listening on (http:\/\/\S+)/);
  try {
    // The cases' own requests, which the bare route answers at the same paths.
    const uncached = (logicType: LogicType) => CASES.find((c) => c.logicType === logicType && !c.cached)!;
    const bareSpecs: Record<Method, LoadSpec> = {
      GET: loadSpec(bare.url, {}, shop, uncached('item-to-item')),
      POST: loadSpec(bare.url, {}, shop, uncached('user-to-item')),
    };
    // A freshly started server answers its first seconds slower (JIT, heap growth), which would flatter
    // the first case: both routes are exercised once before anything is measured.
    for (const method of ['GET', 'POST'] as const) await runLoad(bareSpecs[method], BARE_WARMUP_S);
    const { durationS } = options;
    const cases = new Map<string, CaseRuns[]>(selected.map((testCase) => [testCase.name, []]));
    let previous: { method: Method; run: Measurement } | undefined;
    for (let round = 0; round < options.rounds; round++) {
      for (const testCase of selected) {
        const method = methodOf(testCase);
        const before =
          previous?.method === method ? previous.run : await measure(bare, bareSpecs[method], durationS);
        const spec = loadSpec(daemon.url, headers, shop, testCase);
        await checkAnswer(spec, testCase);
        const swap = testCase.swapping ? swapDuringRun(dataDir, daemon) : undefined;
        const run = await measure(daemon, spec, durationS);
        if (swap) {
          const seconds = (await swap).toFixed(1);
          console.log(`serve: ${MODELS_IN_USE.join(' and ')} published and swapped in after ${seconds} s`);
        }
        const after = await measure(bare, bareSpecs[method], durationS);
        cases.get(testCase.name)!.push({ run, bare: [before, after] });
        previous = { method, run: after };
      }
    }
    return cases;
  } finally {
    await bare.stop();
  }
}

function targetOf(testCase: Case): number {
  return testCase.cached ? CACHED_TARGET : UNCACHED_TARGET;
}

function baselineRps(runs: CaseRuns): number {
  return (runs.bare[0].rps + runs.bare[1].rps) / 2;
}

function describe(label: string, m: Measurement, bareRps?: number): string {
  const cells = [
    label.padEnd(30),
    Math.round(m.rps).toLocaleString('en-US').padStart(8),
    String(m.p50Ms).padStart(6),
    String(m.p99Ms).padStart(6),
    String(Math.round(m.responseBytes)).padStart(6),
    (bareRps === undefined ? '' : (m.rps / bareRps).toFixed(2)).padStart(6),
    (m.serverCores?.toFixed(2) ?? '?').padStart(7),
    m.generatorCores.toFixed(2).padStart(7),
    (m.otherCores?.toFixed(2) ?? '?').padStart(6),
    String(m.errors + m.non2xx).padStart(7),
  ];
  return cells.join('  ');
}

/** A case's figures over its rounds: the median ratio and p99 decide the targets. */
interface CaseSummary {
  ratios: number[];
  ratio: number;
  rps: number;
  p99Ms: number;
}

function summarize(rounds: CaseRuns[]): CaseSummary {
  const ratios = rounds.map((runs) => runs.run.rps / baselineRps(runs));
  return {
    ratios,
    ratio: median(ratios),
    rps: median(rounds.map((runs) => runs.run.rps)),
    p99Ms: median(rounds.map((runs) => runs.run.p99Ms)),
  };
}

/** The targets a case misses, in words; empty when it meets them all. */
function misses(testCase: Case, summary: CaseSummary): string[] {
  const target = targetOf(testCase);
  return [
    ...(summary.ratio < target ? [`median ratio ${summary.ratio.toFixed(2)} < ${target}`] : []),
    ...(!testCase.cached && summary.p99Ms >= P99_TARGET_MS
      ? [`median p99 ${summary.p99Ms} ms >= ${P99_TARGET_MS} ms`]
      : []),
  ];
}

function report(selected: Case[], cases: Map<string, CaseRuns[]>, options: Options): void {
  const summaries = new Map(
    selected.map((testCase) => [testCase.name, summarize(cases.get(testCase.name)!)]),
  );
  for (const testCase of selected) {
    const rounds = cases.get(testCase.name)!;
    const summary = summaries.get(testCase.name)!;
    console.log(
      JSON.stringify({
        bench: 'serve',
        case: testCase.name,
        method: methodOf(testCase),
        ratio: Number(summary.ratio.toFixed(3)),
        ratios: summary.ratios.map((ratio) => Number(ratio.toFixed(3))),
        rps: Math.round(summary.rps),
        p99Ms: summary.p99Ms,
        bareRps: rounds.map((runs) => Math.round(baselineRps(runs))),
        errors: rounds.reduce((sum, runs) => sum + runs.run.errors, 0),
        non2xx: rounds.reduce((sum, runs) => sum + runs.run.non2xx, 0),
        target: targetOf(testCase),
        ...(!testCase.cached && { p99TargetMs: P99_TARGET_MS }),
        connections: CONNECTIONS,
        durationS: options.durationS,
        rounds: options.rounds,
        items: options.items,
        interactions: options.interactions,
        profiled: options.profile !== undefined,
      }),
    );
  }
  console.log(
    `${'run'.padEnd(30)}     req/s  p50 ms  p99 ms   bytes   ratio  server  load-gen  others  errors`,
  );
  for (let round = 0; round < options.rounds; round++) {
    console.log(`round ${round + 1}`);
    for (const testCase of selected) {
      const runs = cases.get(testCase.name)![round];
      const method = methodOf(testCase);
      console.log(describe(`  bare route ${method}, before`, runs.bare[0]));
      console.log(describe(`${testCase.name} (${method})`, runs.run, baselineRps(runs)));
      console.log(describe(`  bare route ${method}, after`, runs.bare[1]));
    }
  }
  console.log(
    `(bytes: per response, headers included; ratio: req/s over the mean of the bare route's runs of the ` +
      `same method just before and after; server, load-gen, others: cores busy during the timed run, of ` +
      `${availableParallelism()})`,
  );
  for (const testCase of selected) {
    const summary = summaries.get(testCase.name)!;
    const missed = misses(testCase, summary);
    const figures = `median ratio ${summary.ratio.toFixed(2)}, median p99 ${summary.p99Ms} ms`;
    const verdict = missed.length === 0 ? 'targets met' : `targets NOT met (${missed.join(', ')})`;
    console.log(`${testCase.name}: ${figures}; ${verdict}`);
  }
}

/** Round `round`'s three requests of a batch case: the same seeds come back in the cached one. */
function batchRequests(shop: LoadedShop, cached: boolean, round: number): BatchRequestSpec[] {
  const pick = (ids: string[]) =>
    ids[cached ? round % Math.min(CACHED_SEEDS, ids.length) : round % ids.length];
  const query = new URLSearchParams({
    count: String(COUNT),
    includedProperties: PROJECTION.join(','),
    ...(!cached && { noCache: 'true' }),
  });
  const itemSeeded = (logicType: LogicType): BatchRequestSpec => ({
    method: 'GET',
    path: `/recommendations/${logicType}/${encodeURIComponent(pick(shop.itemIds))}?scenario=${scenarioSlug(logicType)}&${query}`,
  });
  return [
    itemSeeded('item-to-item'),
    itemSeeded('similar-products'),
    {
      method: 'POST',
      path: '/recommendations',
      body: {
        scenario: scenarioSlug('user-to-item'),
        userId: pick(shop.userIds),
        count: COUNT,
        includedProperties: PROJECTION,
        ...(!cached && { noCache: true }),
      },
    },
  ];
}

/** The batch part, on a daemon whose models are in place; prints one JSON line per batch case. */
async function measureBatches(
  daemon: ChildServer,
  headers: Record<string, string>,
  shop: LoadedShop,
  options: Options,
): Promise<void> {
  await waitForModels(daemon, options.interactions, options.items);
  await waitForDaemonIdle(daemon);
  for (const batchCase of BATCH_CASES) {
    if (options.cases !== undefined && !batchCase.name.includes(options.cases)) continue;
    const figures = await measureBatchLatency(
      daemon.url,
      headers,
      (round) => batchRequests(shop, batchCase.cached, round),
      BATCH_ITERATIONS,
    );
    console.log(
      JSON.stringify({
        bench: 'serve',
        case: batchCase.name,
        ...figures,
        items: options.items,
        interactions: options.interactions,
      }),
    );
    console.log(
      `${batchCase.name}: median ${figures.batch.p50Ms} ms against ${figures.sequential.p50Ms} ms for the three ` +
        `requests one after the other (ratio ${figures.ratio}) and ${figures.concurrent.p50Ms} ms for the three at once ` +
        `(ratio ${figures.ratioConcurrent})`,
    );
  }
}

interface PreparedStore {
  dataDir: string;
  operatorKey: string;
  headers: Record<string, string>;
  shop: LoadedShop;
}

/** A fresh store in a temporary dir, or the kept one of `--store` (loaded on its first use). */
async function preparedStore(options: Options): Promise<PreparedStore> {
  const load = async (dataDir: string, operatorKey: string) => {
    console.log(
      `serve: loading ${options.items.toLocaleString('en-US')} items and ` +
        `${options.interactions.toLocaleString('en-US')} interactions...`,
    );
    return { dataDir, operatorKey, ...(await prepareStore(dataDir, operatorKey, options)) };
  };
  if (options.store === undefined) {
    const workDir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-'));
    // Also on an exception or a signal (the child servers' own exit handlers kill them first).
    process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
    return load(path.join(workDir, 'data'), randomBytes(24).toString('hex'));
  }
  const description = path.join(options.store, KEPT_STORE_FILE);
  const sizes = { items: options.items, interactions: options.interactions };
  if (existsSync(description)) {
    const kept = JSON.parse(readFileSync(description, 'utf8')) as PreparedStore & { sizes: typeof sizes };
    if (kept.sizes.items === sizes.items && kept.sizes.interactions === sizes.interactions) {
      console.log(`serve: reusing the store in ${options.store}`);
      return kept;
    }
  }
  rmSync(options.store, { recursive: true, force: true });
  mkdirSync(options.store, { recursive: true });
  const prepared = await load(path.join(options.store, 'data'), randomBytes(24).toString('hex'));
  writeFileSync(description, JSON.stringify({ ...prepared, sizes }));
  return prepared;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  const selected = CASES.filter((c) => options.cases === undefined || c.name.includes(options.cases));
  if (options.profile !== undefined && !selected.some((c) => c.name === options.profile)) {
    throw new Error(`the profiled case ${options.profile} is not among those selected`);
  }

  const { dataDir, operatorKey, headers, shop } = await preparedStore(options);
  const seeds = { itemIds: shuffled(shop.itemIds), userIds: shuffled(shop.userIds) };

  // Restarted, so that cases are measured on a heap without the ingestion's garbage and with one model
  // build, over all interactions, done before the first request.
  const profileFile = path.join(PROFILE_DIR, PROFILE_NAME);
  const profiled = options.profile !== undefined;
  // A daemon that dies without writing a profile must not leave the last run's to be summarized.
  if (profiled) rmSync(profileFile, { force: true });
  const daemon = await startDaemon(dataDir, operatorKey, { logLevel: 'debug', profile: profiled });
  const cases = await (async () => {
    const measured =
      selected.length > 0
        ? await measureAll(dataDir, daemon, headers, seeds, selected, options)
        : new Map<string, CaseRuns[]>();
    // The batch part: latency with one client, not throughput under load (docs/benchmarks.md).
    if (options.profile === undefined) await measureBatches(daemon, headers, seeds, options);
    return measured;
  })().finally(() => daemon.stop());
  if (selected.length > 0) report(selected, cases, options);
  if (options.profile !== undefined) {
    const window = cases.get(options.profile)![0].run;
    console.log(
      `(the daemon ran under --cpu-prof, which slows it down; profile window: ${options.profile}, round 1)`,
    );
    const summary = summarizeProfile(profileFile, ROOT, window.startedUs, window.endedUs);
    console.log(formatProfileSummary(summary, profileFile));
  }
  const runs = [...cases.values()].flat().flatMap(({ run, bare }) => [run, ...bare]);
  const failures = runs.reduce((sum, m) => sum + m.errors + m.non2xx, 0);
  if (failures > 0) {
    console.error(`serve: the run is not valid, ${failures} requests failed`);
    process.exitCode = 1;
  }
}

await main();
