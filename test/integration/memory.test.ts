import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
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
import { PATIENCE_MS } from '../support/eventually.js';

let daemon: DaemonProcess;
let headers: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemonProcess({
    args: ['--ranking-thread', '--duckdb-memory-limit', '64MB'],
    env: { NEXTREC_DUCKDB_THREADS: '1' },
  });
  headers = tenantHeaders(await createTenant(daemon.url, 'shop'));
  const items = ['a', 'b', 'c'].map((externalId) => ({
    externalId,
    category: 'c',
    attributes: { price: 1 },
  }));
  expect((await call(daemon.url, 'POST', '/ingestion/items', { headers, body: { items } })).status).toBe(200);
  const interactions = [
    { userId: 'u1', itemId: 'a', type: 'view' },
    { userId: 'u1', itemId: 'b', type: 'purchase' },
    { sessionId: 's1', itemId: 'c', type: 'view', country: 'DE' },
  ];
  const stored = await call(daemon.url, 'POST', '/ingestion/interactions', {
    headers,
    body: { interactions },
  });
  expect(stored.status).toBe(200);
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

describe('GET /debug/memory', () => {
  it('takes the operator key only', async () => {
    expectError(await call(daemon.url, 'GET', '/debug/memory'), 401, 'UNAUTHORIZED');
    expectError(await call(daemon.url, 'GET', '/debug/memory', { headers }), 403, 'FORBIDDEN_SCOPE');
  });

  it("says where the memory is: the process, both threads' heaps, DuckDB against its limit, each tenant", async () => {
    const { status, body } = await call(daemon.url, 'GET', '/debug/memory', {
      headers: { 'x-api-key': OPERATOR_KEY },
    });
    expect(status).toBe(200);
    expect(body.process.rss).toBeGreaterThan(body.process.heapUsed);
    expect(body.heaps.eventLoop.used).toBeGreaterThan(0);
    expect(body.heaps.rankingThread.used).toBeGreaterThan(0);
    // The flag and the environment set the store's DuckDB.
    expect(body.duckdb).toMatchObject({ memoryLimit: '64MB', threads: 1 });
    expect(body.duckdb.memory.total).toBeGreaterThan(0);
    expect(body.tenants.shop).toMatchObject({
      items: 3,
      identities: 2,
      historyEvents: 3,
      counterEvents: { recent: 3, geo: 3 },
    });
    // Held once: the ranking thread reads the event-loop thread's histories and counts.
    expect(body.tenants.shop.shared.histories).toBeGreaterThan(0);
    expect(body.tenants.shop.shared.counters).toBeGreaterThan(0);
  });

  it("shows the items the ranking thread keeps rendered, which the tenants' own figures do not, and the answers' pages", async () => {
    const answer = await call(daemon.url, 'GET', '/recommendations/user-to-item/u2?count=3&noCache=true', {
      headers,
    });
    expect(answer.status).toBe(200);
    const items = (answer.body as { items: { itemId: string }[] }).items;
    expect(items.length).toBeGreaterThan(0);
    const { body } = await call(daemon.url, 'GET', '/debug/memory', {
      headers: { 'x-api-key': OPERATOR_KEY },
    });
    expect(body.heaps.rankingThread.cached.shop.rendered).toBe(items.length);
    expect(body.heaps.rankingThread.cached.shop.renderedCharacters).toBeGreaterThan(items.length * 10);
    expect(body.tenants.shop.cached.rendered).toBe(0);
    // The answer's page, kept for POST /recommendations/next within its bound (docs/memory.md).
    expect(body.pages.entries).toBeGreaterThanOrEqual(1);
    expect(body.pages.bytes).toBeGreaterThan(0);
    expect(body.pages.bytes).toBeLessThanOrEqual(12 * 1024 * 1024);
  });
});

describe('the DuckDB flags', () => {
  it('refuse a memory limit without a unit, saying what one looks like', () => {
    const dataDir = tempDataDir();
    try {
      const run = spawnSync(
        process.execPath,
        [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--duckdb-memory-limit', '512'],
        { encoding: 'utf8', timeout: PATIENCE_MS },
      );
      expect(run.status).not.toBe(0);
      expect(run.stderr).toMatch(/a DuckDB memory limit is a number and a unit/);
    } finally {
      removeDataDir(dataDir);
    }
  });
});
