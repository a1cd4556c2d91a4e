import { execFile } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CURRENT_FILE,
  MANIFEST_FILE,
  modelDir,
  readCurrentVersion,
  versionName,
} from '../../src/artifacts/layout.js';
import { CO_VIEW_ITEMS, coViews, FIRST_USERS, NEW_USERS } from '../../fixtures/co-views.js';
import {
  BIN,
  OPERATOR_KEY,
  call,
  createTenant,
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';

/**
 * Two daemons on one PostgreSQL database and one data dir (docs/batch-models.md, "Cluster mode"): one of
 * them builds the tenant's models, both serve the version it publishes, and a corrupted version is refused
 * by both, each keeping the one it serves.
 */

/** Every daemon swaps a newly published version in within this long (docs/batch-models.md). */
const SWAP_BOUND_MS = 10_000;
const TENANT = 'shop';
const run = promisify(execFile);

let postgres: TestPostgres;
let dataDir: string;
let a: DaemonProcess;
let b: DaemonProcess;
let headers: Record<string, string>;
const daemons: DaemonProcess[] = [];

async function start(): Promise<DaemonProcess> {
  const daemon = await startDaemonProcess({ dataDir, args: ['--store', postgres.url] });
  daemons.push(daemon);
  return daemon;
}

function post(daemon: DaemonProcess, route: string, body: unknown) {
  return call(daemon.url, 'POST', route, { headers, body });
}

/** The first of item-to-item(a) on a daemon: a's best neighbour in the co-occurrence it serves. */
async function firstOfA(daemon: DaemonProcess): Promise<string | undefined> {
  const response = await post(daemon, '/recommendations', {
    logicType: 'item-to-item',
    itemId: 'a',
    count: 1,
    noCache: true,
    returnProperties: false,
  });
  expect(response.status).toBe(200);
  return (response.body as { items: { itemId: string }[] }).items[0]?.itemId;
}

async function metrics(daemon: DaemonProcess): Promise<string> {
  const response = await call<string>(daemon.url, 'GET', '/metrics', {
    headers: { 'x-api-key': OPERATOR_KEY },
  });
  expect(response.status).toBe(200);
  return response.body;
}

/** The value of the sample `name{labels}`, or undefined when the daemon has none. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const MODEL = `tenant="${TENANT}",model="cooccurrence"`;

/** What a daemon says of the tenant's co-occurrence: the version serving, published, refused. */
async function versions(daemon: DaemonProcess) {
  const text = await metrics(daemon);
  return {
    serving: sample(text, 'nextrec_model_version', MODEL),
    published: sample(text, 'nextrec_model_version_published', MODEL),
    refused: sample(text, 'nextrec_model_version_refused', MODEL),
  };
}

/** Builds the daemon ran (any model, any outcome), from its build histogram. */
async function builds(daemon: DaemonProcess): Promise<number> {
  return (await metrics(daemon))
    .split('\n')
    .filter((line) => line.startsWith('nextrec_model_build_duration_seconds_count{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** `nextrec build cooccurrence` of the tenant on the shared store, as cron runs it: its output. */
async function cronBuild(): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    [BIN, 'build', 'cooccurrence', '--tenant', TENANT, '--data-dir', dataDir, '--store', postgres.url],
    { timeout: 120_000, env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY } },
  );
  return stdout;
}

/** The version the tenant's co-occurrence pointer names. */
function pointer(): Promise<number | undefined> {
  return readCurrentVersion(modelDir(dataDir, TENANT, 'cooccurrence'));
}

async function claimsModels(daemon: DaemonProcess): Promise<boolean> {
  return sample(await metrics(daemon), 'nextrec_runner_claims', `kind="models",tenant="${TENANT}"`) === 1;
}

beforeAll(async () => {
  postgres = await startPostgres();
  dataDir = tempDataDir();
  a = await start();
  headers = tenantHeaders(await createTenant(a.url, TENANT));
  expect((await post(a, '/ingestion/items', { items: CO_VIEW_ITEMS })).status).toBe(200);
  // A first model, built by the only daemon: a and c co-viewed by two users.
  expect(
    (await post(a, '/ingestion/interactions', { interactions: coViews(FIRST_USERS, 'c', 30) })).status,
  ).toBe(200);
  await eventually(async () => expect(await firstOfA(a)).toBe('c'));
  // The second daemon finds the tenant in the store, and the version published in the data dir.
  b = await start();
});

afterAll(async () => {
  await Promise.all(daemons.map((daemon) => daemon.stop()));
  if (dataDir) removeDataDir(dataDir);
  await postgres?.stop();
});

describe('two daemons sharing a store and a data dir', () => {
  it('serves the published version on both from the start', async () => {
    expect(await firstOfA(b)).toBe('c');
    const [onA, onB] = [await versions(a), await versions(b)];
    expect(onA.serving).toBeGreaterThan(0);
    expect(onB.serving).toBe(onA.serving);
    expect(onB.published).toBe(onA.serving);
  });

  it("builds a tenant's models on one daemon only, and both swap its new version in within 10 s", async () => {
    expect(await claimsModels(a)).toBe(true);
    expect(await claimsModels(b)).toBe(false);
    const before = (await versions(a)).serving!;
    // Twenty users co-view a and b through the second daemon: its scheduler finds the model behind, and
    // leaves the build to the first, which follows the second's writes and builds from every committed row.
    expect(
      (await post(b, '/ingestion/interactions', { interactions: coViews(NEW_USERS, 'b', 10) })).status,
    ).toBe(200);
    let published = 0;
    await eventually(async () => {
      const onA = await versions(a);
      expect(onA.serving).toBeGreaterThan(before);
      expect(await firstOfA(a)).toBe('b');
      published = onA.serving!;
    });
    await eventually(async () => {
      expect((await versions(b)).serving).toBe(published);
      expect(await firstOfA(b)).toBe('b');
    }, SWAP_BOUND_MS);
    expect(await builds(a)).toBeGreaterThanOrEqual(2);
    expect(await builds(b)).toBe(0);
    expect(await claimsModels(b)).toBe(false);
  });

  it('refuses a corrupted version on both daemons, each keeping the one it serves', async () => {
    const serving = (await versions(a)).serving!;
    expect((await versions(b)).serving).toBe(serving);
    const dir = modelDir(dataDir, TENANT, 'cooccurrence');
    const corrupted = serving + 1;
    const target = path.join(dir, versionName(corrupted));
    cpSync(path.join(dir, versionName(serving)), target, { recursive: true });
    const manifestFile = path.join(target, MANIFEST_FILE);
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { version: number };
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, version: corrupted }));
    // One byte of a file of the version changed: its checksum no longer matches the manifest's.
    const file = path.join(
      target,
      readdirSync(target).find((name) => name !== MANIFEST_FILE)!,
    );
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(file, bytes);
    writeFileSync(path.join(dir, `${CURRENT_FILE}.new`), `${versionName(corrupted)}\n`);
    renameSync(path.join(dir, `${CURRENT_FILE}.new`), path.join(dir, CURRENT_FILE));
    for (const daemon of [a, b]) {
      await eventually(async () => {
        expect(await versions(daemon)).toEqual({ serving, published: corrupted, refused: corrupted });
      }, SWAP_BOUND_MS);
      expect(await firstOfA(daemon)).toBe('b');
    }
  });

  it('has a build from cron leave the tenant to the daemon that holds its builds', async () => {
    expect(await claimsModels(a)).toBe(true);
    const before = await pointer();
    expect(await cronBuild()).toContain(`${TENANT}: left to the process that holds its builds`);
    expect(await pointer()).toBe(before);
    expect(await claimsModels(a)).toBe(true);
  });

  it('takes the builds over on another daemon once the one running them was killed', async () => {
    const before = (await versions(b)).serving!;
    await a.kill();
    // Forty users co-view a and c through the remaining daemon: it claims the tenant's builds and runs them.
    const users = Array.from({ length: 40 }, (_, n) => `later${n}`);
    expect((await post(b, '/ingestion/interactions', { interactions: coViews(users, 'c', 5) })).status).toBe(
      200,
    );
    await eventually(async () => {
      expect(await firstOfA(b)).toBe('c');
      expect((await versions(b)).serving).toBeGreaterThan(before);
    });
    expect(await claimsModels(b)).toBe(true);
    expect(await builds(b)).toBeGreaterThanOrEqual(1);
  });

  it('has a build from cron claim and run the builds once no daemon holds them', async () => {
    await b.stop();
    const before = (await pointer())!;
    const output = await cronBuild();
    const built = /^shop cooccurrence v(\d+):/m.exec(output);
    expect(built, output).not.toBeNull();
    expect(Number(built![1])).toBeGreaterThan(before);
    expect(await pointer()).toBe(Number(built![1]));
  });
});
