import { mkdirSync } from 'node:fs';
import { startHaproxy } from '../../src/cluster/haproxy.js';
import type { ClusterLayout } from '../../src/cluster/layout.js';
import { haproxyProgram } from '../../src/cluster/programs.js';
import { freePort } from '../../src/cluster/throwaway.js';

/** A server behind haproxy: its API's port and its embeddings helper's (any free port if it has none). */
export interface Backend {
  port: number;
  embeddingsPort: number;
}

export interface BenchHaproxy {
  url: string;
  stop(): Promise<void>;
}

/** The port of a URL `http://127.0.0.1:<port>` a server printed. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** haproxy's program, or a clear error naming the Debian package. */
export function haproxyFile(): string {
  const { file, lookedFor } = haproxyProgram();
  if (file === undefined)
    throw new Error(`haproxy is missing (${lookedFor}): install the Debian package \`haproxy\``);
  return file;
}

/**
 * haproxy as `npm run cluster` runs it (src/cluster/haproxy.ts: its configuration, round-robin, health
 * checks on `/health/ready`) in front of `backends`, its files in `dir`, on free ports. Killed when this
 * process exits without stopping it (an exception, a signal): it runs in a process group of its own.
 */
export async function startBenchHaproxy(dir: string, backends: Backend[]): Promise<BenchHaproxy> {
  mkdirSync(dir, { recursive: true });
  const layout: ClusterLayout = {
    dir,
    port: await freePort(),
    embeddingsPort: await freePort(),
    daemons: backends.map((backend, i) => ({ n: i + 1, ...backend })),
    // Not started by the benchmark: unused by haproxy's configuration.
    postgresPort: 0,
    redisPort: 0,
  };
  const running = await startHaproxy({
    layout,
    program: haproxyFile(),
    signal: new AbortController().signal,
  });
  const kill = () => running.child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    url: `http://127.0.0.1:${layout.port}`,
    async stop() {
      process.removeListener('exit', kill);
      await running.stop();
    },
  };
}
