import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { dataDirOf, startDaemon, waitForDaemon } from './daemons.js';
import { startHaproxy } from './haproxy.js';
import { clusterLayout, portsOf, type ClusterLayout } from './layout.js';
import { startPostgres } from './postgres.js';
import { ClusterFailure, Stopping, type ClusterProcess } from './processes.js';
import { findPrograms, MissingProgramsError } from './programs.js';
import { startRedis } from './redis.js';

/**
 * `npm run cluster` (README.md, "Cluster mode"): PostgreSQL, Redis, the daemons and haproxy in front of
 * them, on 127.0.0.1, until Ctrl-C or SIGTERM; then haproxy, the daemons, Redis and PostgreSQL stop, in
 * that order. Exits 0 after a stop asked for, 1 when something did not start or stopped by itself.
 */
async function main(): Promise<number> {
  const layout = clusterLayout();
  const programs = findPrograms();
  await checkPortsFree(layout);
  mkdirSync(layout.dir, { recursive: true });

  const stopping = new AbortController();
  const { signal } = stopping;
  const asked = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
  // Later signals change nothing: under npm one Ctrl-C arrives twice, from the terminal and from npm.
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(name, () => stopping.abort());

  // What runs, in the order it started: stopped in the reverse order.
  const stops: Array<() => Promise<void>> = [];
  const watched: ClusterProcess[] = [];
  try {
    const postgres = await startPostgres({
      dir: layout.dir,
      port: layout.postgresPort,
      bin: programs.postgresBin,
    });
    stops.push(postgres.stop);
    say(`PostgreSQL on 127.0.0.1:${layout.postgresPort} (${path.join(layout.dir, 'postgres')})`);
    if (signal.aborted) throw new Stopping();

    const redis = await startRedis({
      dir: layout.dir,
      port: layout.redisPort,
      program: programs.redisServer,
      signal,
    });
    stops.push(() => redis.process.stop());
    watched.push(redis.process);
    say(`Redis on 127.0.0.1:${layout.redisPort}`);

    // The first daemon alone until it listens: it migrates the store and creates the shared secrets.
    const shared = { storeUrl: postgres.url, redisUrl: redis.url };
    const daemons: ClusterProcess[] = [];
    stops.push(async () => void (await Promise.all(daemons.map((daemon) => daemon.stop()))));
    for (const daemon of layout.daemons) {
      const running = startDaemon(layout, daemon, shared);
      daemons.push(running);
      watched.push(running);
      say(
        `daemon ${daemon.n} on http://127.0.0.1:${daemon.port} (pid ${running.child.pid}, log ${running.log})`,
      );
      if (daemon.n === 1) await waitForDaemon(daemon, running, '/health', signal);
    }
    await Promise.all(
      layout.daemons.map((daemon, i) => waitForDaemon(daemon, daemons[i], '/health/ready', signal)),
    );

    const haproxy = await startHaproxy({ layout, program: programs.haproxy, signal });
    // A soft stop: haproxy stops listening and lets the requests in flight finish.
    stops.push(() => haproxy.stop('SIGUSR1'));
    watched.push(haproxy);
    say(
      `haproxy on http://127.0.0.1:${layout.port}, the embeddings helpers on http://127.0.0.1:${layout.embeddingsPort} (${path.join(layout.dir, 'haproxy.cfg')})`,
    );
    if (!process.env.NEXTREC_ADMIN_KEY && existsSync(path.join(dataDirOf(layout), 'admin.key')))
      say(`the operator key is in ${path.join(dataDirOf(layout), 'admin.key')}`);
    say(`cluster ready on http://127.0.0.1:${layout.port}`);

    const endedByItself = Promise.race(watched.map((one) => one.exited.then((how) => ({ one, how }))));
    const ended = await Promise.race([asked.then(() => undefined), endedByItself]);
    if (ended) throw new ClusterFailure(`${ended.one.name} stopped (${ended.how}); see ${ended.one.log}`);
    return 0;
  } catch (error) {
    if (error instanceof Stopping) return 0;
    complain(described(error));
    return 1;
  } finally {
    if (stops.length > 0) say('stopping the cluster');
    for (const stop of stops.reverse()) await stop();
    if (stops.length > 0) say('cluster stopped');
  }
}

/** Says which port of the layout is taken, and how to choose others, before anything starts. */
async function checkPortsFree(layout: ClusterLayout): Promise<void> {
  for (const [port, what] of portsOf(layout)) {
    const server = createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (!free)
      throw new ClusterFailure(
        `port ${port} of 127.0.0.1 (${what}) is in use: is a cluster already running? ` +
          'Choose other ports with NEXTREC_CLUSTER_PORT',
      );
  }
}

/** What went wrong: the message of an expected failure, the stack of anything else. */
function described(error: unknown): string {
  const expected =
    error instanceof ClusterFailure || error instanceof MissingProgramsError || error instanceof RangeError;
  return expected ? error.message : String((error as Error).stack ?? error);
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function complain(line: string): void {
  process.stderr.write(`cluster: ${line}\n`);
}

try {
  process.exitCode = await main();
} catch (error) {
  // Before anything started: a variable out of range, a program missing, a port taken.
  complain(described(error));
  process.exitCode = 1;
}
// The daemons' health checks leave keep-alive sockets: nothing else is left to wait for.
process.exit();
