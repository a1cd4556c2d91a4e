import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { portsOf } from '../../src/cluster/layout.js';
import { onPath, postgresBinDir } from '../../src/cluster/programs.js';
import {
  alive,
  freeClusterPort,
  JWT_SECRET,
  npmRunCluster,
  portFree,
  stopClusters,
  tempDir,
  type RunningCluster,
} from '../support/cluster.js';
import { OPERATOR_KEY, call, createTenant, tenantHeaders } from '../support/daemon-process.js';
import { PATIENCE_MS } from '../support/eventually.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(ROOT, 'dist/src/cluster/main.js');

afterAll(stopClusters);

/** Waits until every process is gone and every port of the layout is free again. */
async function expectAllStopped(cluster: RunningCluster, processes: number[]): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (processes.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(processes.filter(alive)).toEqual([]);
  const ports = portsOf(cluster.layout);
  const free = await Promise.all(ports.map(([port]) => portFree(port)));
  expect(ports.filter((_, i) => !free[i])).toEqual([]);
  for (const { n } of cluster.layout.daemons)
    expect(existsSync(path.join(cluster.layout.dir, `daemon-${n}.pid`))).toBe(false);
}

/** The variables of a process's environment. */
function environmentOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(
    entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

describe('npm run cluster', () => {
  it('starts PostgreSQL, Redis, two daemons and haproxy, balances round-robin, stops everything on SIGTERM and Ctrl-C, and reuses its directory', async () => {
    const dir = path.join(tempDir(), 'cluster');
    const port = await freeClusterPort(2);

    // First start: the pid files name the daemons, each given the operator key, the JWT secret, the
    // feeds' private networks, the shared store and data dir.
    const first = await npmRunCluster(dir, port);
    const pids = first.daemonPids();
    expect(new Set(pids).size).toBe(2);
    expect(pids.every(alive)).toBe(true);
    for (const [i, pid] of pids.entries()) {
      const env = environmentOf(pid);
      expect(env.get('NEXTREC_ADMIN_KEY')).toBe(OPERATOR_KEY);
      expect(env.get('NEXTREC_JWT_SECRET')).toBe(JWT_SECRET);
      expect(env.get('NEXTREC_FEED_PRIVATE_NETWORKS')).toBe('true');
      expect(env.get('NEXTREC_STORE_URL')).toMatch(
        new RegExp(`^postgres://postgres:[0-9a-f]+@127\\.0\\.0\\.1:${first.layout.postgresPort}/nextrec$`),
      );
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const daemon = first.layout.daemons[i];
      expect(args).toEqual(expect.arrayContaining(['serve', '--data-dir', path.join(dir, 'data')]));
      expect(args[args.indexOf('--port') + 1]).toBe(String(daemon.port));
      expect(args[args.indexOf('--embeddings-port') + 1]).toBe(String(daemon.embeddingsPort));
      expect(args[args.indexOf('--rate-limit-redis') + 1]).toBe(
        `redis://127.0.0.1:${first.layout.redisPort}`,
      );
      // The password stays out of the command line.
      expect(args.join(' ')).not.toContain('postgres://');
    }
    const base = `http://127.0.0.1:${port}`;
    const credentials = await createTenant(base, 'cluster-shop');
    const helper = await fetch(`http://127.0.0.1:${port + 1}/health`);
    expect(helper.status).toBe(200);
    expect(await helper.json()).toMatchObject({ status: 'ok' });
    // Neither the helper nor the API logs requests one by one: not haproxy's health checks every second.
    for (const { n } of first.layout.daemons)
      expect(readFileSync(path.join(dir, `daemon-${n}.log`), 'utf8')).not.toContain('incoming request');

    // SIGTERM to npm: npm passes it on; every process ends and every port is free again.
    const firstProcesses = first.processes();
    expect(firstProcesses).toEqual(expect.arrayContaining(pids));
    process.kill(first.child.pid!, 'SIGTERM');
    await first.exited;
    await expectAllStopped(first, firstProcesses);
    expect(first.output()).toContain('cluster stopped');

    // Second start on the same directory: PostgreSQL's cluster is reused, with the tenant in it, which
    // both daemons load; consecutive requests of the tenant alternate between them.
    const version = statSync(path.join(dir, 'postgres', 'PG_VERSION')).mtimeMs;
    const second = await npmRunCluster(dir, port);
    expect(statSync(path.join(dir, 'postgres', 'PG_VERSION')).mtimeMs).toBe(version);
    const daemons = second.daemonPids();
    const answeredBy: number[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await call(base, 'GET', '/catalog/items', { headers: tenantHeaders(credentials) });
      expect(answer.status).toBe(200);
      answeredBy.push(Number(answer.headers.get('x-nextrec-node')!.split(':').pop()));
    }
    expect(new Set(answeredBy)).toEqual(new Set(daemons));
    for (let i = 1; i < answeredBy.length; i++) expect(answeredBy[i]).not.toBe(answeredBy[i - 1]);

    // Ctrl-C: SIGINT to the terminal's whole process group.
    const secondProcesses = second.processes();
    process.kill(-second.child.pid!, 'SIGINT');
    await second.exited;
    await expectAllStopped(second, secondProcesses);
  });
});

describe('npm run cluster without the programs it runs', () => {
  /** The built script run to its exit with this PATH, and these variables of its lookups. */
  function runScript(pathDirs: string[], lookups: Record<string, string>) {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: pathDirs.join(path.delimiter), ...lookups };
    if (!('NEXTREC_HAPROXY' in lookups)) delete env.NEXTREC_HAPROXY;
    const child = spawn(process.execPath, [SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise<{ code: number | null; stderr: string }>((resolve) =>
      child.once('exit', (code) => resolve({ code, stderr })),
    );
  }

  it('names the Debian package of each one missing, and starts nothing', async () => {
    const empty = tempDir();
    const dir = path.join(tempDir(), 'cluster');
    const noPostgres = path.join(empty, 'no-postgres');
    const noHaproxy = path.join(empty, 'no-haproxy');
    const none = await runScript([empty], {
      NEXTREC_CLUSTER_DIR: dir,
      NEXTREC_POSTGRES_BIN: noPostgres,
      NEXTREC_HAPROXY: noHaproxy,
    });
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      `cluster: the cluster needs PostgreSQL's server (initdb, looked for in ${noPostgres}), ` +
        `haproxy (not at ${noHaproxy}), redis-server (not on the PATH): ` +
        "install Debian's packages with `sudo apt-get install postgresql haproxy redis-server`\n",
    );
    expect(existsSync(dir)).toBe(false);

    // PostgreSQL and Redis found, haproxy not: only its package is named.
    const redisOnly = path.join(tempDir(), 'bin');
    mkdirSync(redisOnly);
    symlinkSync(onPath('redis-server')!, path.join(redisOnly, 'redis-server'));
    const found = { NEXTREC_CLUSTER_DIR: dir, NEXTREC_POSTGRES_BIN: postgresBinDir()! };
    const withoutHaproxy = await runScript([redisOnly], { ...found, NEXTREC_HAPROXY: noHaproxy });
    expect(withoutHaproxy.code).toBe(1);
    expect(withoutHaproxy.stderr).toBe(
      `cluster: the cluster needs haproxy (not at ${noHaproxy}): install Debian's package with \`sudo apt-get install haproxy\`\n`,
    );
    expect(existsSync(dir)).toBe(false);

    // Off the PATH (a user's PATH on Debian has no /usr/sbin), haproxy is found where Debian puts it:
    // the script goes on to its next check, the ports, and says the first one taken.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const offPath = await runScript([redisOnly], { ...found, NEXTREC_CLUSTER_PORT: String(port) });
      expect(offPath.stderr).toContain(`cluster: port ${port} of 127.0.0.1 (haproxy (the API)) is in use`);
      expect(offPath.code).toBe(1);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    expect(existsSync(dir)).toBe(false);
  });
});
