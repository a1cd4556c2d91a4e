import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { serveCommand } from './support/bench-daemon.js';
import { startChildServer, type ChildServer } from './support/child-server.js';
import { formatProfileSummary, summarizeProfile } from './support/cpu-profile.js';
import { interactionBatches } from './support/interaction-batches.js';
import { eventsPerSecond, postBatches, type Batch, type LoadResult, type Target } from './support/load.js';
import { positiveInteger } from './support/options.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BARE_ROUTE = fileURLToPath(new URL('./bare-route.js', import.meta.url));
const PROFILE_DIR = path.join(ROOT, '.bench');
const PROFILE_NAME = 'ingest-daemon.cpuprofile';

const BATCH_SIZE = 500;
const TARGET_RATIO = 0.2;
const ROUTE = '/ingestion/interactions';
const TENANT_ID = 'bench';
/**
 * Rounds of the two servers measured in turn (see measureRounds), of which the round of median ratio
 * counts: one round's rate varied by half between runs on this 2-core machine, for the bare route from
 * 365,000 to 690,000 events/s, which swung the ratio alone. A profiled run (`--profile`) has one round.
 */
const ROUNDS = 3;
/** Untimed batches sent first, so that both servers are measured with their hot paths compiled. */
const WARMUP_BATCHES = 20;

interface Options {
  events: number;
  concurrency: number;
  profile: boolean;
}

function parseOptions(argv: string[]): Options {
  // Not strict: bench/run forwards the same arguments to every benchmark.
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      events: { type: 'string', default: '1000000' },
      concurrency: { type: 'string', default: '16' },
      profile: { type: 'boolean', default: false },
    },
  });
  return {
    events: positiveInteger('--events', values.events),
    concurrency: positiveInteger('--concurrency', values.concurrency),
    profile: values.profile === true,
  };
}

interface Measurement extends LoadResult {
  /** CPU time of the server over the run's wall time: above 1, its native threads did part of the work. */
  cores?: number;
  /** CPU time per event, in µs, of the server's event loop thread and of all its threads. */
  mainThreadCpuUs?: number;
  cpuUs?: number;
}

async function measure(
  server: ChildServer,
  target: Target,
  batches: Batch[],
  concurrency: number,
): Promise<Measurement> {
  await postBatches(target, batches.slice(0, WARMUP_BATCHES), concurrency);
  const cpuBefore = server.cpuSeconds();
  const mainBefore = server.mainThreadCpuSeconds();
  const result = await postBatches(target, batches, concurrency);
  const cpuAfter = server.cpuSeconds();
  const mainAfter = server.mainThreadCpuSeconds();
  if (cpuBefore === undefined || cpuAfter === undefined) return result;
  const perEvent = (seconds: number) => (seconds * 1e6) / result.events;
  return {
    ...result,
    cores: (cpuAfter - cpuBefore) / result.seconds,
    cpuUs: perEvent(cpuAfter - cpuBefore),
    mainThreadCpuUs:
      mainBefore === undefined || mainAfter === undefined ? undefined : perEvent(mainAfter - mainBefore),
  };
}

/** One round: the bare route's rate, then a fresh daemon's, measured back to back. */
interface Round {
  bare: Measurement;
  daemon: Measurement;
  ratio: number;
}

/**
 * Rounds of the bare route and the daemon in turn (one when profiled): the load of a shared machine drifts
 * within a run, and a ratio of two rates measured minutes apart drifted with it. The bare route keeps
 * nothing from one round to the next, so one server serves them all; the daemon of each round starts on
 * an empty data dir.
 */
async function measureRounds(batches: Batch[], options: Options, workDir: string): Promise<Round[]> {
  const bareServer = await startChildServer(
    'bare route',
    [BARE_ROUTE],
    /bare route listening on (http:\/\/\S+)/,
  );
  try {
    const bareTarget = { url: bareServer.url, path: ROUTE, headers: { 'content-type': 'application/json' } };
    // An untimed round first: the bare route's first one ran a fifth slower than the next ones (V8 was
    // still optimizing it), which would have favoured the daemon's first round.
    await postBatches(bareTarget, batches, options.concurrency);
    const rounds: Round[] = [];
    for (let round = 0; round < (options.profile ? 1 : ROUNDS); round++) {
      const bare = await measure(bareServer, bareTarget, batches, options.concurrency);
      const dataDir = path.join(workDir, `data-${round}`);
      const daemon = await measureDaemonRound(batches, options, dataDir);
      rmSync(dataDir, { recursive: true, force: true });
      rounds.push({ bare, daemon, ratio: eventsPerSecond(daemon) / eventsPerSecond(bare) });
    }
    return rounds;
  } finally {
    await bareServer.stop();
  }
}

async function measureDaemonRound(batches: Batch[], options: Options, dataDir: string): Promise<Measurement> {
  const operatorKey = randomBytes(24).toString('hex');
  const profiling = options.profile
    ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR, '--cpu-prof-name', PROFILE_NAME]
    : [];
  const server = await startChildServer(
    'daemon',
    serveCommand(['--port', '0', '--data-dir', dataDir, '--log-level', 'warn'], profiling),
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: operatorKey },
  );
  try {
    const apiKey = await createTenant(server.url, operatorKey);
    const headers = { 'content-type': 'application/json', 'x-tenant-id': TENANT_ID, 'x-api-key': apiKey };
    return await measure(server, { url: server.url, path: ROUTE, headers }, batches, options.concurrency);
  } finally {
    await server.stop();
  }
}

/** Creates the benchmark's tenant and returns its API key. */
async function createTenant(url: string, operatorKey: string): Promise<string> {
  const response = await request(`${url}/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': operatorKey },
    body: JSON.stringify({ tenantId: TENANT_ID }),
  });
  const text = await response.body.text();
  if (response.statusCode !== 201) {
    throw new Error(`tenant creation failed (${response.statusCode}): ${text}`);
  }
  return (JSON.parse(text) as { apiKey: string }).apiKey;
}

function rounded(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Number(value.toFixed(3));
}

function describe(label: string, result: Measurement): string {
  const details = [`${result.events.toLocaleString('en-US')} events in ${result.seconds.toFixed(2)} s`];
  if (result.cores !== undefined) details.push(`${result.cores.toFixed(2)} cores busy`);
  if (result.mainThreadCpuUs !== undefined && result.cpuUs !== undefined) {
    details.push(
      `CPU per event: ${result.mainThreadCpuUs.toFixed(2)} µs event loop, ${result.cpuUs.toFixed(2)} µs all threads`,
    );
  }
  if (result.failures > 0) details.push(`${result.failures} FAILED requests, first: ${result.firstFailure}`);
  return `${label}${eventsPerSecond(result).toLocaleString('en-US')} events/s (${details.join(', ')})`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const workDir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-'));
  // Also on an exception or a signal (the child servers' own exit handlers kill them before this one runs).
  process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

  console.log(`ingest: serializing ${options.events.toLocaleString('en-US')} interactions...`);
  const batches = interactionBatches(options.events, BATCH_SIZE);
  console.log(`ingest: ${batches.length} batches of up to ${BATCH_SIZE}, ${options.concurrency} in flight`);
  const profileFile = path.join(PROFILE_DIR, PROFILE_NAME);
  // A daemon that dies without writing a profile must not leave the last run's to be summarized.
  if (options.profile) rmSync(profileFile, { force: true });
  const rounds = await measureRounds(batches, options, workDir);
  // The round of median ratio counts.
  const { bare, daemon, ratio } = [...rounds].sort((a, b) => a.ratio - b.ratio)[
    Math.floor(rounds.length / 2)
  ];
  const failures = rounds.reduce((sum, round) => sum + round.bare.failures + round.daemon.failures, 0);
  console.log(
    JSON.stringify({
      bench: 'ingest',
      events: options.events,
      batch: BATCH_SIZE,
      concurrency: options.concurrency,
      daemonEventsPerS: eventsPerSecond(daemon),
      bareEventsPerS: eventsPerSecond(bare),
      daemonCpuUsPerEvent: rounded(daemon.cpuUs),
      daemonEventLoopCpuUsPerEvent: rounded(daemon.mainThreadCpuUs),
      bareCpuUsPerEvent: rounded(bare.cpuUs),
      ratio: Number(ratio.toFixed(4)),
      roundRatios: rounds.map((round) => Number(round.ratio.toFixed(4))),
      target: TARGET_RATIO,
      failures,
      profiled: options.profile,
    }),
  );
  console.log(`the round of median ratio, of ${rounds.length}:`);
  console.log(describe('bare Fastify route: ', bare));
  console.log(describe('nextrec daemon:     ', daemon));
  const verdict = ratio >= TARGET_RATIO ? 'met' : 'NOT met';
  const each = rounds.map((round) => round.ratio.toFixed(3)).join(', ');
  console.log(`ratio ${ratio.toFixed(3)} (rounds: ${each}; target ${TARGET_RATIO}): ${verdict}`);
  if (options.profile) {
    console.log('(the daemon ran under --cpu-prof, which slows it down)');
    const summary = summarizeProfile(profileFile, ROOT, daemon.startedUs, daemon.endedUs);
    console.log(formatProfileSummary(summary, profileFile));
  }
  if (failures > 0) {
    console.error('ingest: the run is not valid, some requests failed');
    process.exitCode = 1;
  }
}

await main();
