import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterLayout, portsOf, type ClusterLayout } from '../../src/cluster/layout.js';
import { startHaproxy } from '../../src/cluster/haproxy.js';
import { findPrograms } from '../../src/cluster/programs.js';
import { startRedis } from '../../src/cluster/redis.js';
import { OPERATOR_KEY, startDaemonProcess, type DaemonProcess } from './daemon-process.js';
import { startPostgres } from './postgres.js';
import { PATIENCE_MS } from './eventually.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const JWT_SECRET = 'cluster-test-jwt-secret-0123456789abcdef';

const dirs: string[] = [];
const started: Array<{ child: ChildProcess; pids: () => number[] }> = [];

/** For afterAll: kills what the file's clusters left running (a failed test's too), removes their dirs. */
export function stopClusters(): void {
  // A failed test's processes too: nothing is left running on a shared machine.
  for (const { child, pids } of started)
    for (const pid of [child.pid!, ...pids()].filter(alive)) process.kill(pid, 'SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

export const alive = (pid: number) => existsSync(`/proc/${pid}`);

/** A directory PostgreSQL's `postgres` user may enter when the tests run as root. */
export function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-cluster-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

export async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A cluster port whose whole range (README.md, "Cluster mode") is free a moment ago. */
export async function freeClusterPort(daemons: number): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    const layout = clusterLayout({
      NEXTREC_CLUSTER_PORT: String(port),
      NEXTREC_CLUSTER_DAEMONS: String(daemons),
    });
    const free = await Promise.all(portsOf(layout).map(([p]) => portFree(p)));
    if (free.every(Boolean)) return port;
  }
}

/** The pids of every process below `pid`, read from /proc. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** PostgreSQL's server and its processes: pg_ctl starts it apart from the script. */
export function postgresProcesses(layout: ClusterLayout): number[] {
  const pidFile = path.join(layout.dir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return [];
  const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  return [postmaster, ...descendants(postmaster)];
}

export interface RunningCluster {
  layout: ClusterLayout;
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every process of the cluster now: npm's, the script's and theirs, PostgreSQL's. */
  processes(): number[];
  daemonPids(): number[];
}

/** `npm run cluster` in its own process group, until it prints its ready line. */
export async function npmRunCluster(dir: string, port: number): Promise<RunningCluster> {
  const env = {
    ...process.env,
    NEXTREC_CLUSTER_DIR: dir,
    NEXTREC_CLUSTER_PORT: String(port),
    NEXTREC_CLUSTER_DAEMONS: '2',
    NEXTREC_ADMIN_KEY: OPERATOR_KEY,
    NEXTREC_JWT_SECRET: JWT_SECRET,
    NEXTREC_FEED_PRIVATE_NETWORKS: 'true',
  };
  const layout = clusterLayout(env);
  const child = spawn('npm', ['run', 'cluster'], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const processes = () => [...descendants(child.pid!), ...postgresProcesses(layout)];
  started.push({ child, pids: processes });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the cluster did not start:\n${output}`)), PATIENCE_MS);
    child.stdout!.on('data', () => {
      if (output.includes(`cluster ready on http://127.0.0.1:${port}`)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => reject(new Error(`npm run cluster exited:\n${output}`)));
  });
  const daemonPids = () =>
    layout.daemons.map(({ n }) => Number(readFileSync(path.join(dir, `daemon-${n}.pid`), 'utf8')));
  return { layout, child, output: () => output, exited, processes, daemonPids };
}

/**
 * Daemons on one PostgreSQL, one data dir and one Redis, behind haproxy balancing round-robin, as
 * `npm run cluster` runs them, but each started and stopped by the test: a daemon killed here does not
 * stop the others (the script would stop everything).
 */
export interface TestCluster {
  /** haproxy's API. */
  url: string;
  storeUrl: string;
  dataDir: string;
  daemons: (DaemonProcess | undefined)[];
  /** (Re)starts daemon `i` on its port; resolves once it listens (not yet ready, perhaps). */
  start(i: number): Promise<DaemonProcess>;
  stop(): Promise<void>;
}

export async function startTestCluster(daemonCount = 2): Promise<TestCluster> {
  const dir = tempDir();
  const port = await freeClusterPort(daemonCount);
  const layout = clusterLayout({
    NEXTREC_CLUSTER_DIR: dir,
    NEXTREC_CLUSTER_PORT: String(port),
    NEXTREC_CLUSTER_DAEMONS: String(daemonCount),
  });
  const postgres = await startPostgres();
  const stops: Array<() => Promise<unknown>> = [postgres.stop];
  const programs = findPrograms();
  const signal = new AbortController().signal;
  const redis = await startRedis({ dir, port: layout.redisPort, program: programs.redisServer, signal });
  stops.push(() => redis.process.stop());
  const dataDir = path.join(dir, 'data');
  const daemons: (DaemonProcess | undefined)[] = layout.daemons.map(() => undefined);
  const start = async (i: number) => {
    const daemon = await startDaemonProcess({
      dataDir,
      port: layout.daemons[i].port,
      args: [
        '--store',
        postgres.url,
        '--embeddings-port',
        String(layout.daemons[i].embeddingsPort),
        '--rate-limit-redis',
        redis.url,
      ],
      env: { NEXTREC_JWT_SECRET: JWT_SECRET },
    });
    daemons[i] = daemon;
    return daemon;
  };
  // The first alone: it migrates the store and writes the shared secrets.
  await start(0);
  for (let i = 1; i < daemonCount; i++) await start(i);
  const haproxy = await startHaproxy({ layout, program: programs.haproxy, signal });
  return {
    url: `http://127.0.0.1:${port}`,
    storeUrl: postgres.url,
    dataDir,
    daemons,
    start,
    stop: async () => {
      await haproxy.stop();
      await Promise.all(daemons.map((daemon) => daemon?.stop()));
      for (const stop of stops.reverse()) await stop();
    },
  };
}
