import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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

// Two daemons on one PostgreSQL database and one data dir (docs/architecture.md, "The store"): what one
// acknowledges shows through the other's HTTP API within the contract's second.

/** The contract's bound on history effects, with room for this test's own polling. */
const FOLLOW_MS = 1000;

let postgres: TestPostgres;
let dataDir: string;
let a: DaemonProcess;
let b: DaemonProcess;
let headers: Record<string, string>;

const start = () => startDaemonProcess({ dataDir, args: ['--store', postgres.url] });
const send = (daemon: DaemonProcess, method: string, route: string, body?: unknown) =>
  call(daemon.url, method, route, { headers, body });
const recentlyViewed = async (daemon: DaemonProcess, userId: string): Promise<string[]> => {
  const response = await send(daemon, 'POST', '/recommendations', {
    logicType: 'recently-viewed',
    userId,
    count: 10,
  });
  expect(response.status).toBe(200);
  return (response.body as { items: { itemId: string }[] }).items.map((item) => item.itemId);
};

beforeAll(async () => {
  postgres = await startPostgres();
  dataDir = tempDataDir();
  a = await start();
  b = await start();
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await postgres?.stop();
  removeDataDir(dataDir);
});

describe('two daemons sharing a PostgreSQL store', () => {
  it("show each other's writes: tenants, items, events in recommendations (cached answers too), configuration", async () => {
    const credentials = await createTenant(a.url, 'shop');
    headers = tenantHeaders(credentials);
    // The tenant and its API key work on the other daemon within the bound.
    await eventually(
      async () => expect((await send(b, 'GET', '/catalog/items')).status).toBe(200),
      FOLLOW_MS,
    );

    const items = ['i1', 'i2', 'i3'].map((id) => ({ externalId: id, attributes: { name: `Item ${id}` } }));
    expect((await send(a, 'POST', '/ingestion/items', { items })).status).toBe(200);
    await eventually(async () => {
      const item = await send(b, 'GET', '/catalog/items/i2');
      expect(item.status).toBe(200);
      expect(item.body).toMatchObject({ externalId: 'i2', attributes: { name: 'Item i2' } });
    }, FOLLOW_MS);

    const view = (itemId: string) => ({ userId: 'u1', itemId, type: 'view' });
    expect((await send(b, 'POST', '/ingestion/interactions', { interactions: [view('i1')] })).status).toBe(
      200,
    );
    await eventually(async () => expect(await recentlyViewed(a, 'u1')).toEqual(['i1']), FOLLOW_MS);
    // Asked again on both (the answer is cached now), a view on one shows in the other's next answer.
    expect(await recentlyViewed(b, 'u1')).toEqual(['i1']);
    expect((await send(a, 'POST', '/ingestion/interactions', { interactions: [view('i3')] })).status).toBe(
      200,
    );
    await eventually(async () => expect(await recentlyViewed(b, 'u1')).toEqual(['i3', 'i1']), FOLLOW_MS);

    const scenario = { slug: 'home', logicType: 'recently-viewed' };
    expect((await send(b, 'POST', '/scenarios', scenario)).status).toBe(201);
    await eventually(async () => {
      const got = await send(a, 'GET', '/scenarios/home');
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject(scenario);
    }, FOLLOW_MS);

    // A deleted item leaves the other's catalog and answers.
    expect((await send(a, 'DELETE', '/catalog/items/i3')).status).toBe(204);
    await eventually(async () => {
      expect((await send(b, 'GET', '/catalog/items/i3')).status).toBe(404);
      expect(await recentlyViewed(b, 'u1')).toEqual(['i1']);
    }, FOLLOW_MS);
  });

  it('a daemon started again is ready only with what the other wrote meanwhile', async () => {
    await b.stop();
    // Written while it is down, and while it starts.
    const items = [{ externalId: 'down' }];
    expect((await send(a, 'POST', '/ingestion/items', { items })).status).toBe(200);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        const items = [{ externalId: `during-${written}` }];
        expect((await send(a, 'POST', '/ingestion/items', { items })).status).toBe(200);
        written++;
      }
    })();
    b = await start();
    // Said to listen once ready: ready, with everything written before it started.
    expect((await call(b.url, 'GET', '/health/ready')).status).toBe(200);
    expect((await send(b, 'GET', '/catalog/items/down')).status).toBe(200);
    writing = false;
    await writer;
    // And what was written while it started follows within the bound.
    await eventually(async () => {
      for (let n = 0; n < written; n++)
        expect((await send(b, 'GET', `/catalog/items/during-${n}`)).status, `during-${n}`).toBe(200);
    }, FOLLOW_MS);
    expect(written).toBeGreaterThan(0);
  });
});
