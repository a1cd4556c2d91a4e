import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROCESS_V8_FLAGS } from '../state/memory.js';
import type { ClusterLayout, DaemonLayout } from './layout.js';
import { startProcess, waitUntil, type ClusterProcess } from './processes.js';

/** bin/run.js, from dist/src/cluster/ where the built script runs. */
const BIN = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

/** What every daemon of the cluster shares: the store, the data dir of its files, the Redis of its rate limits. */
export interface SharedByDaemons {
  storeUrl: string;
  redisUrl: string;
}

/** `<dir>/data`: the data dir every daemon shares (secrets, lake, model artifacts). */
export function dataDirOf(layout: ClusterLayout): string {
  return path.join(layout.dir, 'data');
}

export function pidFileOf(layout: ClusterLayout, daemon: DaemonLayout): string {
  return path.join(layout.dir, `daemon-${daemon.n}.pid`);
}

/** The arguments of daemon n's `node`, as `nextrec serve` is started (with its V8 flags, docs/memory.md). */
export function daemonArgs(layout: ClusterLayout, daemon: DaemonLayout, shared: SharedByDaemons): string[] {
  return [
    ...PROCESS_V8_FLAGS,
    BIN,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(daemon.port),
    '--embeddings',
    '--embeddings-port',
    String(daemon.embeddingsPort),
    '--data-dir',
    dataDirOf(layout),
    '--rate-limit-redis',
    shared.redisUrl,
  ];
}

/**
 * The environment of every daemon: this process's, so that `NEXTREC_ADMIN_KEY`, `NEXTREC_JWT_SECRET`,
 * `NEXTREC_FEED_PRIVATE_NETWORKS` (and any other `NEXTREC_*` setting) reach each one alike, with the
 * store's URL, which carries PostgreSQL's password: in the environment, it stays out of `ps`.
 */
export function daemonEnv(shared: SharedByDaemons, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, NEXTREC_STORE_URL: shared.storeUrl };
}

/** Starts daemon n, its output in `<dir>/daemon-<n>.log`, and writes its pid to `<dir>/daemon-<n>.pid`. */
export function startDaemon(
  layout: ClusterLayout,
  daemon: DaemonLayout,
  shared: SharedByDaemons,
): ClusterProcess {
  const started = startProcess(`daemon ${daemon.n}`, process.execPath, daemonArgs(layout, daemon, shared), {
    log: path.join(layout.dir, `daemon-${daemon.n}.log`),
    env: daemonEnv(shared),
  });
  const pidFile = pidFileOf(layout, daemon);
  if (started.child.pid !== undefined) writeFileSync(pidFile, `${started.child.pid}\n`);
  void started.exited.then(() => rmSync(pidFile, { force: true }));
  return started;
}

/** Waits until the daemon answers `route` with 200: `/health` once it listens, `/health/ready` once ready. */
export async function waitForDaemon(
  daemon: DaemonLayout,
  running: ClusterProcess,
  route: '/health' | '/health/ready',
  signal: AbortSignal,
): Promise<void> {
  const answers = async () => (await fetch(`http://127.0.0.1:${daemon.port}${route}`, { signal })).ok;
  await waitUntil(answers, { process: running, signal });
}
