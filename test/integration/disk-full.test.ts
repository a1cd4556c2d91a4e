import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type Response,
  type TenantCredentials,
} from '../support/daemon-process.js';

/**
 * A full disk under the data dir (docs/errors.md; docs/configuration.md, "Health and metrics"): the daemon's data dir is a
 * small tmpfs of its own, filled with a file the test removes again. Writes refused meanwhile answer 507
 * INSUFFICIENT_STORAGE and store nothing; readiness and the metrics say so; once space returns, writes
 * succeed again without a restart, and every acknowledged event is there, before and after a restart.
 */

/** DuckDB's file, its write-ahead log and the interactions log fit in this with room to spare. */
const TMPFS_SIZE = '64m';
/** Room the filler leaves: a few of the batches below. */
const LEFT_FREE = 1024 * 1024;

let mount: string;
let mounted = false;
let daemon: DaemonProcess;
let tenant: TenantCredentials;
const filler = () => path.join(mount, 'filler');

/** Appends to the filler until not a byte more fits (what the daemon freed meanwhile included). */
function topUp(): void {
  for (const chunk of [1024 * 1024, 4096, 1]) {
    try {
      for (;;) appendFileSync(filler(), Buffer.alloc(chunk));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  }
}

/** Event ids answered 200, and those of requests refused. */
const acknowledged = new Set<string>();
const refused = new Set<string>();
let batches = 0;

function interactions(count: number): { eventIds: string[]; body: object } {
  const batch = batches++;
  const eventIds = Array.from({ length: count }, (_, i) => `e-${batch}-${i}`);
  return {
    eventIds,
    body: {
      interactions: eventIds.map((eventId, i) => ({
        userId: 'shopper',
        // A long id makes each row take room in the log.
        itemId: `item-${(batch * count + i) % 500}-${'x'.repeat(200)}`,
        type: i % 7 === 0 ? 'cart' : 'view',
        eventId,
      })),
    },
  };
}

function items(count: number): object {
  const batch = batches++;
  return {
    items: Array.from({ length: count }, (_, i) => ({
      externalId: `item-${batch}-${i}`,
      category: 'shoes',
      attributes: { name: `Shoe ${batch}-${i}`, text: 'y'.repeat(300) },
    })),
  };
}

async function ingest(count: number): Promise<Response> {
  const { eventIds, body } = interactions(count);
  const answer = await call(daemon.url, 'POST', '/ingestion/interactions', {
    headers: tenantHeaders(tenant),
    body,
  });
  for (const eventId of eventIds) (answer.status === 200 ? acknowledged : refused).add(eventId);
  return answer;
}

async function storedEventIds(): Promise<Set<string>> {
  const answer = await call(daemon.url, 'GET', '/users/shopper/export', { headers: tenantHeaders(tenant) });
  expect(answer.status).toBe(200);
  return new Set((answer.body.interactions as { eventId: string }[]).map((event) => event.eventId));
}

async function metric(name: string): Promise<number> {
  const answer = await call(daemon.url, 'GET', '/metrics', { headers: { 'x-api-key': OPERATOR_KEY } });
  const line = (answer.body as string).split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function expectInsufficientStorage(answer: Response<any>): void {
  expectError(answer, 507, 'INSUFFICIENT_STORAGE');
  expect(answer.body.error).toBe('Insufficient Storage');
  expect(answer.body.message).toMatch(/disk is full: nothing of this request was stored/);
}

beforeAll(async () => {
  mount = mkdtempSync(path.join(tmpdir(), 'nextrec-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', mount], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(
      `this test mounts a tmpfs as the data dir, which needs root (CI runs as root): ${(error as Error).message}`,
    );
  }
  mounted = true;
  daemon = await startDaemonProcess({ dataDir: mount });
  tenant = await createTenant(daemon.url, 'shop');
});

afterAll(async () => {
  await daemon?.stop();
  if (mounted) execFileSync('umount', [mount]);
  rmSync(mount, { recursive: true, force: true });
});

describe('a full disk', () => {
  it('refuses writes with 507, reports it, and takes writes again once space returns', async () => {
    expect((await ingest(200)).status).toBe(200);
    const catalog = await call(daemon.url, 'POST', '/ingestion/items', {
      headers: tenantHeaders(tenant),
      body: items(200),
    });
    expect(catalog.status).toBe(200);

    // Nearly all the room left goes to a file of the test's own.
    const { bavail, bsize } = statfsSync(mount);
    writeFileSync(filler(), Buffer.alloc(Math.max(0, bavail * bsize - LEFT_FREE)));

    // Interactions (the interactions log) and items (DuckDB) until both are refused.
    let interactionsRefused: Response | undefined;
    let itemsRefused: Response | undefined;
    for (let round = 0; round < 200 && !(interactionsRefused && itemsRefused); round++) {
      const answer = await ingest(500);
      if (answer.status !== 200) interactionsRefused ??= answer;
      const upsert = await call(daemon.url, 'POST', '/ingestion/items', {
        headers: tenantHeaders(tenant),
        body: items(300),
      });
      if (upsert.status !== 200) itemsRefused ??= upsert;
    }
    expect(interactionsRefused, 'interactions were refused').toBeDefined();
    expect(itemsRefused, 'items were refused').toBeDefined();
    expectInsufficientStorage(interactionsRefused!);
    expectInsufficientStorage(itemsRefused!);
    expect(interactionsRefused!.headers.get('retry-after')).toBe('30');

    // Still full (a failed write may have given back some room): every kind of write is refused the same
    // way, and nothing of it is stored.
    topUp();
    expectInsufficientStorage(await ingest(500));
    const scenario = await call(daemon.url, 'POST', '/scenarios', {
      headers: tenantHeaders(tenant),
      body: { slug: 'refused-while-full', logicType: 'user-to-item' },
    });
    expectInsufficientStorage(scenario);

    const ready = await call(daemon.url, 'GET', '/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { state: 'done', models: 'done', warmup: 'done', disk: 'full' },
    });
    // Recommendations are served from memory meanwhile.
    const recommended = await call(daemon.url, 'POST', '/recommendations', {
      headers: tenantHeaders(tenant),
      body: { logicType: 'user-to-item', userId: 'shopper', count: 3 },
    });
    expect(recommended.status).toBe(200);
    expect(await metric('nextrec_disk_full')).toBe(1);
    expect(await metric('nextrec_disk_full_refusals_total')).toBeGreaterThanOrEqual(4);

    // Space returns: no restart, writes succeed again by themselves.
    rmSync(filler());
    await eventually(async () => expect((await ingest(100)).status).toBe(200), 10_000);
    const after = await call(daemon.url, 'POST', '/ingestion/items', {
      headers: tenantHeaders(tenant),
      body: items(10),
    });
    expect(after.status).toBe(200);
    const created = await call(daemon.url, 'POST', '/scenarios', {
      headers: tenantHeaders(tenant),
      body: { slug: 'after-space-returned', logicType: 'user-to-item' },
    });
    expect(created.status).toBe(201);
    expect((await call(daemon.url, 'GET', '/health/ready')).body.checks.disk).toBe('ok');
    expect(await metric('nextrec_disk_full')).toBe(0);

    // Every acknowledged event is stored, and none of a refused request.
    const stored = await storedEventIds();
    expect([...acknowledged].filter((eventId) => !stored.has(eventId))).toEqual([]);
    expect([...refused].filter((eventId) => stored.has(eventId))).toEqual([]);
    expect(stored.size).toBe(acknowledged.size);
    const scenarios = await call(daemon.url, 'GET', '/scenarios', { headers: tenantHeaders(tenant) });
    expect(scenarios.body.data.map((s: { slug: string }) => s.slug)).toEqual(['after-space-returned']);
    // Every failure met on the full disk was answered as one (no 500), and the daemon kept running.
    expect(daemon.output()).not.toContain('unhandled error');
    expect(daemon.process.exitCode).toBeNull();
  }, 60_000);

  it('keeps every acknowledged event across a restart', async () => {
    expect(await daemon.stop()).toBe(0);
    daemon = await startDaemonProcess({ dataDir: mount });
    const stored = await storedEventIds();
    expect(stored.size).toBe(acknowledged.size);
    expect([...acknowledged].every((eventId) => stored.has(eventId))).toBe(true);
    expect(daemon.output()).not.toContain('unhandled error');
  }, 60_000);
});
