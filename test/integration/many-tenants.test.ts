import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CO_VIEW_ITEMS, coViews, FIRST_USERS, NEW_USERS } from '../../fixtures/co-views.js';
import {
  call,
  createTenant,
  daemonsOfFile,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';

/**
 * Many small tenants writing at once (docs/batch-models.md): each one's model effects show within the
 * contract's 5 s of its last write, however many others wait for builds.
 */
const TENANTS = 100;
/** Their writes are spread over a minute. */
const SPREAD_MS = 60_000;
/** CONTRACT, "Freshness of effects". */
const BOUND_MS = 5_000;

const daemons = daemonsOfFile();
let daemon: DaemonProcess;
const headersOf = new Map<string, Record<string, string>>();

const tenantIds = Array.from({ length: TENANTS }, (_, n) => `shop${n}`);
function post(tenantId: string, route: string, body: unknown) {
  return call(daemon.url, 'POST', route, { headers: headersOf.get(tenantId)!, body });
}

/** The first of item-to-item(a): a's best neighbour in the tenant's co-occurrence, else the most popular. */
async function firstOfA(tenantId: string): Promise<string | undefined> {
  const response = await post(tenantId, '/recommendations', {
    logicType: 'item-to-item',
    itemId: 'a',
    count: 1,
    noCache: true,
    returnProperties: false,
  });
  expect(response.status).toBe(200);
  return (response.body as { items: { itemId: string }[] }).items[0]?.itemId;
}

/** Polls until the tenant's item-to-item(a) starts with `item`; resolves when it did (epoch ms). */
async function whenFirst(tenantId: string, item: string, giveUpAt: number): Promise<number> {
  for (;;) {
    if ((await firstOfA(tenantId)) === item) return Date.now();
    if (Date.now() > giveUpAt) return Number.POSITIVE_INFINITY;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  daemon = await daemons.start();
  for (const tenantId of tenantIds) {
    headersOf.set(tenantId, tenantHeaders(await createTenant(daemon.url, tenantId)));
    expect((await post(tenantId, '/ingestion/items', { items: CO_VIEW_ITEMS })).status).toBe(200);
    // A first model: a and c co-viewed by two users.
    const interactions = coViews(FIRST_USERS, 'c', 30);
    expect((await post(tenantId, '/ingestion/interactions', { interactions })).status).toBe(200);
  }
  const giveUpAt = Date.now() + 120_000;
  for (const tenantId of tenantIds) expect(await whenFirst(tenantId, 'c', giveUpAt)).toBeLessThan(giveUpAt);
}, 180_000);

afterAll(() => daemons.stopAll());

describe('many small tenants writing at once', () => {
  it('shows each tenant its new co-views within 5 s of its last write', async () => {
    const lags = await Promise.all(
      tenantIds.map(async (tenantId, n) => {
        await new Promise((resolve) => setTimeout(resolve, (n * SPREAD_MS) / TENANTS));
        const response = await post(tenantId, '/ingestion/interactions', {
          interactions: coViews(NEW_USERS, 'b', 10),
        });
        expect(response.status).toBe(200);
        const written = Date.now();
        return (await whenFirst(tenantId, 'b', written + 30_000)) - written;
      }),
    );
    expect(lags.filter((lag) => lag > BOUND_MS)).toEqual([]);
  }, 180_000);
});
