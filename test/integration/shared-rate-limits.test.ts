import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPath } from '../../src/cluster/programs.js';
import { startRedis as startClusterRedis, type ClusterRedis } from '../../src/cluster/redis.js';
import { freePort } from '../../src/cluster/throwaway.js';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';

const redisDir = mkdtempSync(path.join(tmpdir(), 'nextrec-redis-'));

/** Debian's redis-server (package `redis-server`, which `.ci/run` installs) as `npm run cluster` starts it. */
function startRedis(port: number): Promise<ClusterRedis> {
  return startClusterRedis({
    dir: redisDir,
    port,
    program:
      onPath('redis-server') ??
      assert.fail("redis-server is not on the PATH: install Debian's package redis-server"),
    signal: new AbortController().signal,
  });
}

describe('rate limits counted in Redis by every daemon given it', () => {
  let redisPort: number;
  let redisServer: ClusterRedis;
  let redis: Redis;
  const daemons: DaemonProcess[] = [];

  beforeAll(async () => {
    redisPort = await freePort();
    redisServer = await startRedis(redisPort);
    redis = new Redis(redisPort, '127.0.0.1');
    redis.on('error', () => undefined);
    const url = `redis://127.0.0.1:${redisPort}`;
    for (let i = 0; i < 2; i++)
      daemons.push(await startDaemonProcess({ args: ['--rate-limit-redis', url, '--no-warm-up'] }));
  });

  afterAll(async () => {
    for (const daemon of daemons) {
      await daemon.stop();
      removeDataDir(daemon.dataDir);
    }
    redis?.disconnect();
    await redisServer?.process.stop();
    rmSync(redisDir, { recursive: true, force: true });
  });

  it('gives exactly the budget across two daemons: 40 requests to each at 60 a minute are 20 answers of 429', async () => {
    // The same tenant on both daemons (each has its own store here; a cluster shares one).
    const credentials = [];
    for (const daemon of daemons) {
      credentials.push(await createTenant(daemon.url, 'shared-shop'));
      const set = await call(daemon.url, 'PUT', '/tenants/shared-shop/rate-limits', {
        headers: { 'x-api-key': OPERATOR_KEY },
        body: { api: 60 },
      });
      expect(set.status).toBe(200);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++)
      for (const [d, daemon] of daemons.entries()) {
        const answer = await call(daemon.url, 'GET', '/catalog/items', {
          headers: tenantHeaders(credentials[d]),
        });
        if (answer.status === 429) expectError(answer, 429, 'RATE_LIMITED');
        statuses.push(answer.status);
      }
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    // The first 60 pass, whichever daemon took them.
    expect(statuses.slice(0, 60).every((status) => status === 200)).toBe(true);

    // Every key the daemons made expires with its minute.
    const keys = await redis.keys('nextrec:rate-limit:*');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
  });

  it('lets requests through uncounted, and counts that in /metrics, while Redis is away', async () => {
    const [daemon] = daemons;
    const credentials = await createTenant(daemon.url, 'redis-away');
    await call(daemon.url, 'PUT', '/tenants/redis-away/rate-limits', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { api: 1 },
    });
    expect(
      (await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(credentials) })).status,
    ).toBe(200);
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(credentials) }),
      429,
      'RATE_LIMITED',
    );

    await redisServer.process.stop('SIGKILL');
    for (let i = 0; i < 3; i++)
      expect(
        (await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(credentials) })).status,
      ).toBe(200);
    const metrics = await call<string>(daemon.url, 'GET', '/metrics', {
      headers: { 'x-api-key': OPERATOR_KEY },
    });
    const failures = /nextrec_rate_limit_count_failures_total (\d+)/.exec(metrics.body);
    expect(Number(failures?.[1])).toBeGreaterThanOrEqual(3);

    // Back again: counting resumes by itself (the budget's minute starts anew in the empty Redis).
    redisServer = await startRedis(redisPort);
    const statuses: number[] = [];
    const deadline = Date.now() + 10_000;
    while (!statuses.includes(429) && Date.now() < deadline) {
      statuses.push(
        (await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(credentials) })).status,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses).toContain(429);
  });

  it('refuses to start when the Redis it was given cannot be reached, naming it without its password', async () => {
    const port = await freePort();
    const dataDir = tempDataDir();
    try {
      const failed = await startDaemonProcess({
        dataDir,
        args: ['--rate-limit-redis', `redis://someone:hunter2secret@127.0.0.1:${port}`],
      }).then(
        () => new Error('the daemon started'),
        (error: Error) => error,
      );
      expect(failed.message).toContain(`cannot reach the rate limits' Redis at redis://127.0.0.1:${port}`);
      expect(failed.message).not.toContain('hunter2secret');
    } finally {
      removeDataDir(dataDir);
    }
  });
});
