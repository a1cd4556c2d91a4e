import { afterAll, describe, expect, it } from 'vitest';
import { call, createTenant, daemonsOfFile, tenantHeaders } from '../support/daemon-process.js';
import { queryStore } from '../support/store-file.js';

const daemons = daemonsOfFile();
afterAll(daemons.stopAll);
const started = daemons.start;

describe('durability', () => {
  it('keeps every acknowledged write through SIGKILL', async () => {
    let daemon = await started();
    const credentials = await createTenant(daemon.url, 'durable');
    const headers = tenantHeaders(credentials);
    const acknowledgedEvents: string[] = [];
    const acknowledgedItems: string[] = [];
    // Concurrent writers so that requests share group commits; the process dies right after the last 2xx.
    await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        for (let round = 0; round < 10; round++) {
          const ids = Array.from({ length: 50 }, (_, i) => `ev-${writer}-${round}-${i}`);
          const response = await call(daemon.url, 'POST', '/ingestion/interactions', {
            headers,
            body: {
              interactions: ids.map((eventId, i) => ({
                eventId,
                userId: `u${writer}`,
                itemId: `i${i}`,
                type: 'view',
              })),
            },
          });
          if (response.status === 200) acknowledgedEvents.push(...ids);
          const item = `item-${writer}-${round}`;
          const upsert = await call(daemon.url, 'POST', '/ingestion/items', {
            headers,
            body: { items: [{ externalId: item, attributes: { round } }] },
          });
          if (upsert.status === 200) acknowledgedItems.push(item);
        }
      }),
    );
    await daemon.kill();
    expect(acknowledgedEvents).toHaveLength(4000);

    // Interactions still in the interactions log at the kill are moved into the store as it starts again.
    daemon = await started(daemon.dataDir);
    const items = await call(daemon.url, 'GET', '/catalog/items?limit=1000', { headers });
    expect(items.body.total).toBe(acknowledgedItems.length);
    expect(items.body.data.map((item: { externalId: string }) => item.externalId).sort()).toEqual(
      acknowledgedItems.sort(),
    );
    // The credentials survived too, and dedupe by eventId still holds after the restart.
    const again = await call(daemon.url, 'POST', '/ingestion/interactions', {
      headers,
      body: { interactions: [{ eventId: acknowledgedEvents[0], userId: 'u0', itemId: 'i0', type: 'view' }] },
    });
    expect(again.body).toMatchObject({ accepted: 1 });
    await daemon.stop();
    const rows = await queryStore(
      daemon.dataDir,
      `SELECT event_id FROM interactions WHERE tenant_id = 'durable'`,
    );
    expect(rows).toHaveLength(4000);
    expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(acknowledgedEvents));
  });

  it('finishes in-flight writes on SIGTERM, exits 0 and releases the store', async () => {
    const daemon = await started();
    const headers = tenantHeaders(await createTenant(daemon.url, 'graceful'));
    const events = Array.from({ length: 2000 }, (_, i) => ({
      userId: `u${i % 50}`,
      itemId: `i${i % 300}`,
      type: 'view',
    }));
    const inFlight = Array.from({ length: 6 }, () =>
      call(daemon.url, 'POST', '/ingestion/interactions', { headers, body: { interactions: events } }).catch(
        () => undefined,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const exit = daemon.stop();
    const answers = await Promise.all(inFlight);
    expect(await exit).toBe(0);
    const acknowledged = answers.filter((answer) => answer?.status === 200).length;
    const rows = await queryStore(
      daemon.dataDir,
      `SELECT count(*) AS n FROM interactions WHERE tenant_id = 'graceful'`,
    );
    expect(Number(rows[0].n)).toBeGreaterThanOrEqual(acknowledged * 2000);
  });
});
