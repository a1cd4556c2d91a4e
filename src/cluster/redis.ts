import path from 'node:path';
import { Redis } from 'ioredis';
import { startProcess, waitUntil, type ClusterProcess } from './processes.js';

export interface ClusterRedis {
  /** `redis://127.0.0.1:<port>`: what `--rate-limit-redis` takes. */
  url: string;
  process: ClusterProcess;
}

/**
 * Starts Redis for the daemons' shared rate limits (docs/configuration.md, "Rate limits across daemons")
 * on 127.0.0.1:`port`, in memory only: its counts live a minute, nothing is worth keeping on disk.
 */
export async function startRedis(options: {
  dir: string;
  port: number;
  program: string;
  signal: AbortSignal;
}): Promise<ClusterRedis> {
  const { dir, port, program, signal } = options;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const redis = startProcess('redis-server', program, [...args, '--dir', dir], {
    log: path.join(dir, 'redis.log'),
  });
  try {
    await waitUntil(() => answers(port), { process: redis, signal });
  } catch (error) {
    await redis.stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, process: redis };
}

async function answers(port: number): Promise<boolean> {
  const probe = new Redis(port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } finally {
    probe.disconnect();
  }
}
