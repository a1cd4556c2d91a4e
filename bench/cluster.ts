/**
 * Several daemons on one PostgreSQL (docs/scaling.md): ingestion events/s on PostgreSQL against the
 * DuckDB store in the same run; uncached user-to-item recommendations/s through haproxy with one and
 * with two daemons, beside a bare route behind the same haproxy; and a daemon's start time per million
 * interactions loaded from PostgreSQL, beside DuckDB's. Prints one JSON line per part and the figures
 * of every round. PostgreSQL (a throwaway cluster) and haproxy run as `npm run cluster` runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchPostgres, type BenchPostgres } from './support/bench-postgres.js';
import { haproxyFile } from './support/bench-haproxy.js';
import { measureIngestRounds } from './support/cluster-ingest.js';
import { measureServeRounds, type ServeRound } from './support/cluster-serve.js';
import { measureStarts } from './support/cluster-start.js';
import { interactionBatches } from './support/interaction-batches.js';
import { eventsPerSecond } from './support/load.js';
import { positiveInteger } from './support/options.js';
import { median } from './support/quantile.js';

/** As bench/ingest. */
const BATCH_SIZE = 500;
const PARTS = ['ingest', 'recommend', 'start'] as const;
type Part = (typeof PARTS)[number];

interface Options {
  parts: Part[];
  /** Ingestion: events per round, requests in flight. */
  events: number;
  concurrency: number;
  /** Rounds of the ingestion and recommendation parts. */
  rounds: number;
  /** Recommendations: the shop, each timed run's seconds, autocannon's connections. */
  items: number;
  interactions: number;
  durationS: number;
  connections: number;
  /** Start time: interactions the restarted daemons hold, restarts of each. */
  startInteractions: number;
  startRounds: number;
}

/** The defaults (a full run takes about 10 minutes on 2 cores), and `--quick`'s, a smoke run's. */
const DEFAULTS = {
  events: 200_000,
  concurrency: 16,
  rounds: 3,
  items: 20_000,
  interactions: 200_000,
  duration: 10,
  connections: 50,
  'start-interactions': 1_000_000,
  'start-rounds': 2,
};
const QUICK: typeof DEFAULTS = {
  events: 20_000,
  concurrency: 16,
  rounds: 1,
  items: 2_000,
  interactions: 20_000,
  duration: 3,
  connections: 50,
  'start-interactions': 50_000,
  'start-rounds': 1,
};

function parseOptions(argv: string[]): Options {
  const names = Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>;
  // Not strict: bench/run forwards the same arguments to every benchmark.
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      parts: { type: 'string', default: PARTS.join(',') },
      quick: { type: 'boolean', default: false },
    },
  });
  const defaults = values.quick === true ? QUICK : DEFAULTS;
  const number = (name: keyof typeof DEFAULTS) =>
    positiveInteger(`--${name}`, values[name] ?? defaults[name]);
  const parts = String(values.parts).split(',');
  const unknown = parts.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length > 0) throw new Error(`--parts takes ${PARTS.join(', ')}, not ${unknown.join(', ')}`);
  return {
    parts: parts as Part[],
    events: number('events'),
    concurrency: number('concurrency'),
    rounds: number('rounds'),
    items: number('items'),
    interactions: number('interactions'),
    durationS: number('duration'),
    connections: number('connections'),
    startInteractions: number('start-interactions'),
    startRounds: number('start-rounds'),
  };
}

const fixed = (value: number, digits = 3) => Number(value.toFixed(digits));
const figure = (value: number) => Math.round(value).toLocaleString('en-US');

/** Returns the failed requests. */
async function ingestPart(postgres: BenchPostgres, options: Options, workDir: string): Promise<number> {
  console.log(`cluster: serializing ${options.events.toLocaleString('en-US')} interactions...`);
  const batches = interactionBatches(options.events, BATCH_SIZE);
  const rounds = await measureIngestRounds(postgres, batches, options, workDir);
  // The round of median ratio counts, as in bench/ingest.
  const { postgres: pg, duckdb, ratio } = [...rounds].sort((a, b) => a.ratio - b.ratio)[rounds.length >> 1];
  const failures = rounds.reduce((sum, round) => sum + round.postgres.failures + round.duckdb.failures, 0);
  console.log(
    JSON.stringify({
      bench: 'cluster',
      part: 'ingest',
      events: options.events,
      batch: BATCH_SIZE,
      concurrency: options.concurrency,
      postgresEventsPerS: eventsPerSecond(pg),
      duckdbEventsPerS: eventsPerSecond(duckdb),
      ratio: fixed(ratio),
      roundRatios: rounds.map((round) => fixed(round.ratio)),
      failures,
    }),
  );
  console.log(
    `ingestion, the round of median ratio of ${rounds.length}: PostgreSQL ${figure(eventsPerSecond(pg))} ` +
      `events/s, DuckDB ${figure(eventsPerSecond(duckdb))} events/s, ratio ${ratio.toFixed(3)}`,
  );
  for (const round of rounds)
    if (round.postgres.failures + round.duckdb.failures > 0)
      console.error(
        `ingestion: failed requests, first: ${round.postgres.firstFailure ?? round.duckdb.firstFailure}`,
      );
  return failures;
}

/** Returns the failed requests. */
async function recommendPart(postgres: BenchPostgres, options: Options, workDir: string): Promise<number> {
  const rounds = await measureServeRounds(postgres, options, workDir);
  const ratios = (over: (round: ServeRound) => number) => rounds.map(over);
  const twoOverOne = ratios((round) => round.two.rps / round.one.rps);
  const oneOverBare = ratios((round) => round.one.rps / round.bare.rps);
  const twoOverBare = ratios((round) => round.two.rps / round.bare.rps);
  const rps = (backends: keyof ServeRound) => Math.round(median(rounds.map((round) => round[backends].rps)));
  const p99 = (backends: keyof ServeRound) => median(rounds.map((round) => round[backends].p99Ms));
  const failures = rounds.reduce(
    (sum, round) => sum + Object.values(round).reduce((s, run) => s + run.errors + run.non2xx, 0),
    0,
  );
  console.log(
    JSON.stringify({
      bench: 'cluster',
      part: 'recommend',
      requests: 'user-to-item uncached, POST /recommendations',
      oneDaemonRps: rps('one'),
      twoDaemonsRps: rps('two'),
      bareRps: rps('bare'),
      twoOverOne: fixed(median(twoOverOne)),
      oneOverBare: fixed(median(oneOverBare)),
      twoOverBare: fixed(median(twoOverBare)),
      roundTwoOverOne: twoOverOne.map((ratio) => fixed(ratio)),
      p99Ms: { one: p99('one'), two: p99('two'), bare: p99('bare') },
      items: options.items,
      interactions: options.interactions,
      connections: options.connections,
      durationS: options.durationS,
      failures,
    }),
  );
  console.log(`${'through haproxy'.padEnd(28)}  req/s  p50 ms  p99 ms  servers  machine  errors`);
  rounds.forEach((round, i) => {
    for (const [backends, label] of [
      ['bare', 'bare route'],
      ['one', 'one daemon'],
      ['two', 'two daemons'],
    ] as const) {
      const run = round[backends];
      const cells = [
        `round ${i + 1}, ${label}`.padEnd(28),
        figure(run.rps).padStart(6),
        String(run.p50Ms).padStart(6),
        String(run.p99Ms).padStart(6),
        (run.serverCores?.toFixed(2) ?? '?').padStart(7),
        (run.machineCores?.toFixed(2) ?? '?').padStart(7),
        String(run.errors + run.non2xx).padStart(7),
      ];
      console.log(cells.join('  '));
    }
  });
  console.log(
    `(servers: cores busy behind haproxy during the timed run; machine: all cores busy, of ${availableParallelism()})`,
  );
  console.log(
    `recommendations: two daemons ${median(twoOverOne).toFixed(2)} times one daemon's rate ` +
      `(one daemon ${median(oneOverBare).toFixed(2)} of the bare route, two ${median(twoOverBare).toFixed(2)})`,
  );
  return failures;
}

async function startPart(postgres: BenchPostgres, options: Options, workDir: string): Promise<void> {
  const figures = await measureStarts(
    postgres,
    { items: options.items, interactions: options.startInteractions, rounds: options.startRounds },
    workDir,
  );
  const millions = options.startInteractions / 1e6;
  const loaded = {
    postgres: median(figures.startSeconds.postgres),
    duckdb: median(figures.startSeconds.duckdb),
  };
  const empty = {
    postgres: median(figures.emptySeconds.postgres),
    duckdb: median(figures.emptySeconds.duckdb),
  };
  // A start's seconds beyond an empty store's, per million interactions held.
  const perMillion = (kind: 'postgres' | 'duckdb') => (loaded[kind] - empty[kind]) / millions;
  const seconds = (values: number[]) => values.map((s) => fixed(s, 2));
  console.log(
    JSON.stringify({
      bench: 'cluster',
      part: 'start',
      interactions: options.startInteractions,
      items: options.items,
      postgresStartS: fixed(loaded.postgres, 2),
      duckdbStartS: fixed(loaded.duckdb, 2),
      postgresEmptyStartS: fixed(empty.postgres, 2),
      duckdbEmptyStartS: fixed(empty.duckdb, 2),
      postgresSPerMillion: fixed(perMillion('postgres'), 2),
      duckdbSPerMillion: fixed(perMillion('duckdb'), 2),
      ratio: fixed(perMillion('postgres') / perMillion('duckdb')),
      startsS: {
        postgres: seconds(figures.startSeconds.postgres),
        duckdb: seconds(figures.startSeconds.duckdb),
      },
      emptyStartsS: {
        postgres: seconds(figures.emptySeconds.postgres),
        duckdb: seconds(figures.emptySeconds.duckdb),
      },
      loadS: {
        postgres: fixed(figures.loadSeconds.postgres, 1),
        duckdb: fixed(figures.loadSeconds.duckdb, 1),
      },
    }),
  );
  const line = (label: string, kind: 'postgres' | 'duckdb') =>
    `${label} ${loaded[kind].toFixed(2)} s (empty ${empty[kind].toFixed(2)} s: ` +
    `${perMillion(kind).toFixed(2)} s a million interactions)`;
  console.log(
    `start to /health/ready, ${options.startInteractions.toLocaleString('en-US')} interactions, medians of ` +
      `${options.startRounds}: ${line('PostgreSQL', 'postgres')}, ${line('DuckDB', 'duckdb')}; ratio of the ` +
      `seconds a million ${(perMillion('postgres') / perMillion('duckdb')).toFixed(2)}`,
  );
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  // Before anything starts: a missing program is a clear error, not a failure half-way.
  if (options.parts.includes('recommend')) haproxyFile();
  const workDir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-cluster-'));
  // Also on an exception or a signal: the servers' own exit handlers stop them first (see child-server,
  // bench-postgres and bench-haproxy).
  process.once('exit', () => rmSync(workDir, { recursive: true, force: true }));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));
  const [one, five] = loadavg();
  console.log(
    `cluster: load average ${one.toFixed(1)} (5 min: ${five.toFixed(1)}) on ${availableParallelism()} cores`,
  );

  const postgres = await startBenchPostgres();
  let failures = 0;
  try {
    if (options.parts.includes('ingest')) failures += await ingestPart(postgres, options, workDir);
    if (options.parts.includes('recommend')) failures += await recommendPart(postgres, options, workDir);
    if (options.parts.includes('start')) await startPart(postgres, options, workDir);
  } finally {
    await postgres.stop();
  }
  const [after] = loadavg();
  console.log(`cluster: load average ${after.toFixed(1)} at the end`);
  if (failures > 0) {
    console.error(`cluster: the run is not valid, ${failures} requests failed`);
    process.exitCode = 1;
  }
}

await main();
