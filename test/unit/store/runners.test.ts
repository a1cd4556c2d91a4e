import { spawn } from 'node:child_process';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import { SingleProcessRunners } from '../../../src/store/single-process-runners.js';
import { eventually } from '../../support/eventually.js';
import { postgresOfTests } from '../../support/postgres.js';
import { storeDirs } from '../../support/store-dirs.js';

/** The compiled PostgreSQL store, which a child process opens the way a daemon does. */
const COMPILED_PG_STORE = new URL('../../../dist/src/store/postgres/pg-store.js', import.meta.url).href;

/** Resolves after `ms`. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs two tasks of one key through `exclusive` of two runners, the second asked while the first runs;
 * returns the order in which they started and ended.
 */
async function overlap(
  first: SingleProcessRunners | PgStore['runners'],
  second: SingleProcessRunners | PgStore['runners'],
): Promise<string[]> {
  const steps: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const a = first.exclusive('lake', 'acme', async () => {
    steps.push('a started');
    await held;
    steps.push('a ended');
  });
  await eventually(async () => expect(steps).toEqual(['a started']));
  const b = second.exclusive('lake', 'acme', async () => {
    steps.push('b started');
    return 'b';
  });
  // Long enough for several tries of the lock: b waits for a all the same.
  await pause(500);
  expect(steps).toEqual(['a started']);
  release();
  await a;
  expect(await b).toBe('b');
  return steps;
}

describe('runners of a store one process owns (DuckDB)', () => {
  const dirs = storeDirs('nextrec-runners-');

  it('grants every claim and lists it', async () => {
    const store = await dirs.open(dirs.dataDir());
    expect(await store.runners.claim('models', 'acme')).toBe(true);
    expect(await store.runners.claim('models', 'acme')).toBe(true);
    expect(await store.runners.claim('retention', '*')).toBe(true);
    expect(store.runners.claims()).toEqual([
      { kind: 'models', tenantId: 'acme' },
      { kind: 'retention', tenantId: '*' },
    ]);
    // The pointers are the record of versions: nothing is recorded in the store.
    await store.modelVersions.publish('acme', 'cooccurrence', 5);
    expect(await store.modelVersions.published()).toEqual(new Map());
  });

  it('runs exclusive tasks of one tenant and kind one at a time, and others beside them', async () => {
    const runners = new SingleProcessRunners();
    expect(await overlap(runners, runners)).toEqual(['a started', 'a ended', 'b started']);
    let release!: () => void;
    const held = runners.exclusive('lake', 'acme', () => new Promise<void>((resolve) => (release = resolve)));
    expect(await runners.exclusive('lake', 'other', async () => 'beside')).toBe('beside');
    expect(await runners.exclusive('models', 'acme', async () => 'beside')).toBe('beside');
    release();
    await held;
  });
});

describe('runners of daemons sharing a PostgreSQL database', () => {
  const { connect, emptyDatabase, open: openStore } = postgresOfTests('runners');
  const open = (url: string) => openStore(url, { poolSize: 2 });

  /** The server processes of the runners' sessions holding an advisory lock. */
  async function lockHolders(db: pg.Client): Promise<number[]> {
    const { rows } = await db.query<{ pid: number }>(
      "SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted ORDER BY pid",
    );
    return rows.map((row) => row.pid);
  }

  it('grants a tenant and kind to one store at a time, held until it closes', async () => {
    const url = await emptyDatabase();
    const [a, b] = [await open(url), await open(url)];
    expect(await a.runners.claim('models', 'acme')).toBe(true);
    expect(await b.runners.claim('models', 'acme')).toBe(false);
    // Claimed again by its holder: still its own, once.
    expect(await a.runners.claim('models', 'acme')).toBe(true);
    // Another kind of the tenant, or another tenant, is claimed apart.
    expect(await b.runners.claim('feeds', 'acme')).toBe(true);
    expect(await b.runners.claim('models', 'other')).toBe(true);
    expect(await a.runners.claim('models', 'other')).toBe(false);
    expect(a.runners.claims()).toEqual([{ kind: 'models', tenantId: 'acme' }]);
    expect(b.runners.claims()).toEqual([
      { kind: 'feeds', tenantId: 'acme' },
      { kind: 'models', tenantId: 'other' },
    ]);
    // Two claims asked together by the holder-to-be: one lock, granted to both.
    const [first, second] = await Promise.all([
      a.runners.claim('retention', '*'),
      a.runners.claim('retention', '*'),
    ]);
    expect([first, second]).toEqual([true, true]);
    expect(await b.runners.claim('retention', '*')).toBe(false);
    await a.close();
    expect(await b.runners.claim('models', 'acme')).toBe(true);
    expect(await b.runners.claim('retention', '*')).toBe(true);
  });

  it('runs exclusive tasks of a tenant and kind one at a time across stores, and releases them after', async () => {
    const url = await emptyDatabase();
    const [a, b] = [await open(url), await open(url)];
    expect(await overlap(a.runners, b.runners)).toEqual(['a started', 'a ended', 'b started']);
    // A failed task releases its lock too.
    await expect(
      a.runners.exclusive('lake', 'acme', () => Promise.reject(new Error('export failed'))),
    ).rejects.toThrow('export failed');
    expect(await b.runners.exclusive('lake', 'acme', async () => 'free')).toBe('free');
    // Exclusive tasks hold no claim.
    expect(a.runners.claims()).toEqual([]);
    expect(await lockHolders(await connect(url))).toEqual([]);
  });

  it("releases a store's claims when its session dies, and the store claims anew once it can", async () => {
    const url = await emptyDatabase();
    const [a, b] = [await open(url), await open(url)];
    expect(await a.runners.claim('models', 'acme')).toBe(true);
    const db = await connect(url);
    const [holder] = await lockHolders(db);
    await db.query('SELECT pg_terminate_backend($1)', [holder]);
    await eventually(async () => expect(a.runners.claims()).toEqual([]));
    expect(await b.runners.claim('models', 'acme')).toBe(true);
    // The store whose session died opens another, and finds the work held.
    expect(await a.runners.claim('models', 'acme')).toBe(false);
    expect(await a.runners.claim('models', 'other')).toBe(true);
  });

  it('releases the claims of a process killed with SIGKILL', async () => {
    const url = await emptyDatabase();
    const b = await open(url);
    // A daemon's store in a process of its own: it claims, says so, and waits to be killed.
    const script = `
      const { PgStore } = await import(${JSON.stringify(COMPILED_PG_STORE)});
      const store = await PgStore.open(process.argv[1], { poolSize: 1 });
      console.log(await store.runners.claim('models', 'acme'));
      setInterval(() => undefined, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, url], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const said = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (data: Buffer) => resolve(data.toString().trim()));
        child.once('exit', (code) => reject(new Error(`the holder exited (code ${code})`)));
      });
      expect(said).toBe('true');
      expect(await b.runners.claim('models', 'acme')).toBe(false);
      child.kill('SIGKILL');
      await eventually(async () => expect(await b.runners.claim('models', 'acme')).toBe(true));
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('records the newest version published of each model, whoever publishes last', async () => {
    const url = await emptyDatabase();
    const [a, b] = [await open(url), await open(url)];
    expect(await a.modelVersions.published()).toEqual(new Map());
    await a.modelVersions.publish('acme', 'cooccurrence', 1_700_000_000_002);
    // An older version published later (a publisher that lost a race) leaves the newer one.
    await b.modelVersions.publish('acme', 'cooccurrence', 1_700_000_000_001);
    await b.modelVersions.publish('acme', 'ease', 1_700_000_000_005);
    expect(await b.modelVersions.published()).toEqual(
      new Map([
        ['acme/cooccurrence', 1_700_000_000_002],
        ['acme/ease', 1_700_000_000_005],
      ]),
    );
    await b.modelVersions.publish('acme', 'cooccurrence', 1_700_000_000_009);
    expect((await a.modelVersions.published()).get('acme/cooccurrence')).toBe(1_700_000_000_009);
  });
});
