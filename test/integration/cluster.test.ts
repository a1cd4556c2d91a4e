import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, stopClusters, type TestCluster } from '../support/cluster.js';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  tenantHeaders,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';
import { daemonReady } from '../support/models.js';

/**
 * Two daemons on one PostgreSQL and one data dir behind haproxy (docs/scaling.md): what one daemon
 * acknowledged shows on the other within the contract's second, rate limits count across them, a daemon
 * killed during ingestion loses nothing acknowledged and stores nothing twice, and a restarted daemon is
 * ready only once it caught up.
 */

let cluster: TestCluster;
let shop: TenantCredentials;

beforeAll(async () => {
  cluster = await startTestCluster(2);
  shop = await createTenant(cluster.url, 'shop');
});

afterAll(async () => {
  await cluster?.stop();
  stopClusters();
});

const daemonUrl = (i: number) => cluster.daemons[i]!.url;

/** Waits until `check` passes on daemon `i`, and returns how long that took (ms). */
async function visibleOn(i: number, check: (url: string) => Promise<void>): Promise<number> {
  const started = Date.now();
  await eventually(() => check(daemonUrl(i)));
  return Date.now() - started;
}

describe('two daemons on one PostgreSQL', () => {
  it('know a tenant created through either, with its credentials', async () => {
    for (const i of [0, 1])
      await visibleOn(i, async (url) => {
        const answer = await call(url, 'GET', '/catalog/items', { headers: tenantHeaders(shop) });
        expect(answer.status).toBe(200);
      });
  });

  it("show one daemon's acknowledged writes on the other within a second", async () => {
    const headers = tenantHeaders(shop);
    const items = Array.from({ length: 5 }, (_, i) => ({
      externalId: `i${i}`,
      attributes: { title: `Item ${i}` },
    }));
    expect((await call(daemonUrl(0), 'POST', '/ingestion/items', { headers, body: { items } })).status).toBe(
      200,
    );
    const itemDelay = await visibleOn(1, async (url) => {
      expect((await call(url, 'GET', '/catalog/items/i4', { headers })).status).toBe(200);
    });

    const views = ['i1', 'i2', 'i3'].map((itemId) => ({ userId: 'u1', itemId, type: 'view' }));
    const written = await call(daemonUrl(0), 'POST', '/ingestion/interactions', {
      headers,
      body: { interactions: views },
    });
    expect(written.status).toBe(200);
    const historyDelay = await visibleOn(1, async (url) => {
      const answer = await call(url, 'POST', '/recommendations', {
        headers,
        body: { logicType: 'recently-viewed', userId: 'u1' },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.items.map((item: { itemId: string }) => item.itemId)).toEqual(['i3', 'i2', 'i1']);
    });

    const settings = await call(daemonUrl(1), 'PUT', '/catalog/tenant-settings', {
      headers,
      body: { interactionWeights: { view: 2 } },
    });
    expect(settings.status).toBe(200);
    const settingsDelay = await visibleOn(0, async (url) => {
      const answer = await call(url, 'GET', '/catalog/tenant-settings', { headers });
      expect(answer.body.interactionWeights.view).toBe(2);
    });

    expect((await call(daemonUrl(1), 'DELETE', '/catalog/items/i4', { headers })).status).toBe(204);
    const deleteDelay = await visibleOn(0, async (url) => {
      expectError(await call(url, 'GET', '/catalog/items/i4', { headers }), 404, 'NOT_FOUND');
    });

    for (const delay of [itemDelay, historyDelay, settingsDelay, deleteDelay])
      expect(delay).toBeLessThan(1_000);
  });

  it('count a rate limit across daemons: 40 requests to each at 60 a minute are 20 answers of 429', async () => {
    // Both through one daemon: the other learns of the tenant and its limit by following them.
    const limited = await createTenant(daemonUrl(0), 'limited');
    const set = await call(daemonUrl(0), 'PUT', '/tenants/limited/rate-limits', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { api: 60 },
    });
    expect(set.status).toBe(200);
    // Both daemons have the limit before counting starts.
    for (const i of [0, 1])
      await visibleOn(i, async (url) => {
        const answer = await call(url, 'GET', '/tenants/limited/rate-limits', {
          headers: { 'x-api-key': OPERATOR_KEY },
        });
        expect(answer.body.api).toBe(60);
      });
    const statuses: number[] = [];
    for (let n = 0; n < 40; n++)
      for (const i of [0, 1]) {
        const answer = await call(daemonUrl(i), 'GET', '/catalog/items', { headers: tenantHeaders(limited) });
        if (answer.status === 429) expectError(answer, 429, 'RATE_LIMITED');
        statuses.push(answer.status);
      }
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    expect(statuses.filter((status) => status === 200)).toHaveLength(60);
  });

  it('store every acknowledged eventId once when a daemon is killed during ingestion and the client retries on the other', async () => {
    const headers = tenantHeaders(shop);
    const batches = Array.from({ length: 60 }, (_, b) =>
      Array.from({ length: 50 }, (_, e) => ({
        eventId: `k-${b}-${e}`,
        userId: `buyer-${e % 7}`,
        itemId: `i${e % 4}`,
        type: 'view',
      })),
    );
    const acknowledged = new Set<string>();
    const send = async (batch: (typeof batches)[number], first: number): Promise<void> => {
      // Through haproxy first; after a failure, to the other daemon, and again until one acknowledges.
      for (let attempt = 0; ; attempt++) {
        const url = attempt === 0 ? cluster.url : daemonUrl((first + attempt) % 2);
        const answer = await call(url, 'POST', '/ingestion/interactions', {
          headers,
          body: { interactions: batch },
        }).catch(() => undefined);
        if (answer?.status === 200) {
          for (const event of batch) acknowledged.add(event.eventId);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const victim = cluster.daemons[0]!;
    const sending = batches.map((batch, b) =>
      new Promise((resolve) => setTimeout(resolve, b * 10)).then(() => send(batch, b % 2)),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    await victim.kill();
    await Promise.all(sending);
    expect(acknowledged.size).toBe(60 * 50);

    const client = new pg.Client({ connectionString: cluster.storeUrl });
    await client.connect();
    try {
      const stored = await client.query<{ event_id: string; copies: string }>(
        `SELECT event_id, count(*) AS copies FROM interactions
          WHERE tenant_id = 'shop' AND event_id LIKE 'k-%' GROUP BY event_id`,
      );
      expect(stored.rows.length).toBe(acknowledged.size);
      expect(stored.rows.every((row) => Number(row.copies) === 1)).toBe(true);
    } finally {
      await client.end();
    }

    // Restarted, the killed daemon is ready only once it caught up: then it shows the last batch's events.
    const restarted = await cluster.start(0);
    await daemonReady(restarted.url);
    const recent = await call(restarted.url, 'POST', '/recommendations', {
      headers,
      body: { logicType: 'recently-viewed', userId: 'buyer-6' },
    });
    expect(recent.status).toBe(200);
    expect(recent.body.items.length).toBeGreaterThan(0);
  });
});
