import { afterEach, describe, expect, it } from 'vitest';
import {
  call,
  createTenant,
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';
import { daemonReady, modelCaughtUp } from '../support/models.js';

interface Answer {
  items: { itemId: string; attributes?: { price: number } }[];
  count: number;
  algorithm: string;
  scenario?: string;
}

const daemons: DaemonProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop()));
  dirs.splice(0).forEach(removeDataDir);
});

async function started(dataDir: string, rankingThread: boolean): Promise<DaemonProcess> {
  const daemon = await startDaemonProcess({
    dataDir,
    args: [rankingThread ? '--ranking-thread' : '--no-ranking-thread'],
  });
  daemons.push(daemon);
  return daemon;
}

const REQUESTS: unknown[] = [
  { logicType: 'item-to-item', itemId: 's1', count: 5 },
  { scenario: 'pdp', itemId: 's2', count: 5, country: 'DE' },
  { logicType: 'user-to-item', userId: 'u1', count: 6 },
  { logicType: 'user-to-item', userId: 'u7', count: 6, filter: `'category' = "bags"` },
  { logicType: 'items-to-items', itemIds: ['s1', 'b1'], count: 4 },
  { logicType: 'recently-viewed', userId: 'u2' },
  { logicType: 'user-to-item', userId: 'nobody', count: 3 },
];

/** What must not depend on the thread; scores are left out, since recency weights move with the clock. */
function summary(answer: Answer) {
  const { count, algorithm, scenario } = answer;
  return { ids: answer.items.map((entry) => entry.itemId), count, algorithm, scenario };
}

describe('ranking in a worker thread', () => {
  it('answers as ranking in the event-loop thread does, from the loaded store and after each write', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    let daemon = await started(dataDir, true);
    const headers = tenantHeaders(await createTenant(daemon.url, 'shop'));
    const post = (route: string, body: unknown) => call<Answer>(daemon.url, 'POST', route, { headers, body });
    const put = (route: string, body: unknown) => call<Answer>(daemon.url, 'PUT', route, { headers, body });
    const items = [
      ...[1, 2, 3, 4, 5, 6].map((n) => ({
        externalId: `s${n}`,
        category: 'shoes',
        attributes: { price: n * 10 },
      })),
      ...[1, 2, 3, 4].map((n) => ({ externalId: `b${n}`, category: 'bags', attributes: { price: n * 15 } })),
    ];
    expect((await post('/ingestion/items', { items })).status).toBe(200);
    const interactions = [];
    for (let u = 1; u <= 8; u++) {
      const country = u % 2 ? 'DE' : 'FR';
      interactions.push({ userId: `u${u}`, itemId: 's1', type: 'view', country });
      interactions.push({ userId: `u${u}`, itemId: u <= 5 ? 's2' : 'b1', type: 'view', country });
      if (u % 3 === 0) interactions.push({ userId: `u${u}`, itemId: `b${u / 3}`, type: 'cart', country });
    }
    expect((await post('/ingestion/interactions', { interactions })).status).toBe(200);
    expect(
      (
        await post('/scenarios', {
          slug: 'pdp',
          logicType: 'item-to-item',
          filter: `'price' > 15`,
          boosters: [`boost by 2 where 'category' = "bags"`],
          constraints: { maxPerCategory: 2 },
        })
      ).status,
    ).toBe(201);
    // A bag ranks second for s1 only through co-occurrence: the model is in place.
    const modelServes = async () => {
      const answer = await post('/recommendations', {
        logicType: 'item-to-item',
        itemId: 's1',
        count: 2,
        noCache: true,
      });
      expect(answer.body.items.map((entry) => entry.itemId)).toEqual(['s2', 'b1']);
    };
    // The first models, built from all of them, however long their builds take: user-to-item ranks from
    // EASE and co-occurrence, and the answers compared below must all rank from the same models.
    await modelCaughtUp(daemon.url, 'shop', 'cooccurrence');
    await modelCaughtUp(daemon.url, 'shop', 'ease');
    await modelServes();
    const answers = async () => {
      const bodies = [];
      for (const body of REQUESTS) {
        const response = await post('/recommendations', { ...(body as object), noCache: true });
        expect(response.status).toBe(200);
        bodies.push(summary(response.body));
      }
      return bodies;
    };
    // Both daemons compared below load the store at start: a restart gives items new dense ids (in
    // the store's order), and ties between equal scores go by them.
    // A restarted daemon serves once it loaded the models built before (GET /health/ready).
    await daemon.stop();
    daemon = await started(dataDir, false);
    await daemonReady(daemon.url);
    await modelServes();
    const inEventLoop = await answers();
    await daemon.stop();
    daemon = await started(dataDir, true);
    await daemonReady(daemon.url);
    await modelServes();
    expect(await answers()).toEqual(inEventLoop);

    // Every write is seen by the next request, which the thread ranks.
    const filteredCounts: number[] = [];
    for (let n = 1; n <= 6; n++) {
      await post('/ingestion/interactions', {
        interactions: [{ userId: 'walker', itemId: `s${n}`, type: 'view' }],
      });
      const recent = await post('/recommendations', { logicType: 'recently-viewed', userId: 'walker' });
      expect(recent.body.items[0].itemId).toBe(`s${n}`);
      expect(recent.body.count).toBe(n);

      const floor = n * 10;
      await put('/scenarios/pdp', { logicType: 'item-to-item', filter: `'price' > ${floor}` });
      const filtered = await post('/recommendations', {
        scenario: 'pdp',
        itemId: 's1',
        count: 20,
        includedProperties: ['attributes.price'],
      });
      const prices = filtered.body.items.map((entry) => entry.attributes!.price);
      expect(prices.every((price) => price > floor)).toBe(true);
      filteredCounts.push(prices.length);
    }
    // Prices go up to 60: the last filter leaves nothing.
    expect(filteredCounts[0]).toBeGreaterThan(0);
    expect(filteredCounts.at(-1)).toBe(0);
    // Had the thread failed, the event-loop thread would have ranked all this, and said so.
    expect(daemon.output()).not.toMatch(/ranking thread failed/);
  });
});
