/**
 * Fresh models for every tenant (docs/batch-models.md): small tenants' model effects against the
 * contract's 5 s, while a large tenant's models build. A daemon is loaded with a generated shop (the
 * `bench` tenant, default 100,000 items and 2,000,000 interactions) and `--tenants` small tenants, each
 * with a first model (a and c co-viewed by two users, p the most popular). Then new interactions beyond
 * the stale share make the large tenant's co-occurrence and EASE due, and while they build, each small
 * tenant gets 20 users who co-view a and b, spread over `--spread` seconds. A small tenant's lag is the
 * time from its write's answer until item-to-item(a) answers b first, which only its rebuilt
 * co-occurrence does. Prints the lags (median, p90, max, how many over 5 s), and when the large
 * tenant's new models were swapped in (from /metrics' model ages), to show they built meanwhile.
 *
 *   npm run build && node dist/bench/freshness.js [--items 100000] [--interactions 2000000]
 *     [--tenants 100] [--spread 60]
 */
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { CO_VIEW_ITEMS, coViews, FIRST_USERS, NEW_USERS } from '../fixtures/co-views.js';
import { Rng } from '../fixtures/prng.js';
import { OPERATOR_KEY, startBenchDaemon, type BenchCredentials } from './support/bench-daemon.js';
import { positiveInteger } from './support/options.js';
import { quantile } from './support/quantile.js';
import { benchShop, loadShop, postJson, postRandomInteractions } from './support/shop-loader.js';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    interactions: { type: 'string', default: '2000000' },
    tenants: { type: 'string', default: '100' },
    spread: { type: 'string', default: '60' },
  },
});
const items = positiveInteger('--items', values.items);
const interactions = positiveInteger('--interactions', values.interactions);
const tenants = positiveInteger('--tenants', values.tenants);
const spreadMs = positiveInteger('--spread', values.spread) * 1_000;

/** CONTRACT, "Freshness of effects". */
const BOUND_MS = 5_000;
/** A lag past this is reported as never. */
const GIVE_UP_MS = 60_000;
const STALE_SHARE = 0.11;
const BURST_BATCH = 5_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The first of item-to-item(a) for a small tenant. */
async function firstOfA(url: string, headers: Record<string, string>): Promise<string | undefined> {
  const answer = (await postJson(
    `${url}/recommendations`,
    headers,
    { logicType: 'item-to-item', itemId: 'a', count: 1, noCache: true, returnProperties: false },
    200,
  )) as { items: { itemId: string }[] };
  return answer.items[0]?.itemId;
}

/** How long after `from` item-to-item(a) answered `item` first (Infinity: not within GIVE_UP_MS). */
async function lagUntilFirst(
  url: string,
  headers: Record<string, string>,
  item: string,
  from: number,
): Promise<number> {
  for (;;) {
    if ((await firstOfA(url, headers)) === item) return Date.now() - from;
    if (Date.now() - from > GIVE_UP_MS) return Number.POSITIVE_INFINITY;
    await sleep(100);
  }
}

/** The age of each model the large tenant serves, from /metrics (seconds). */
async function modelAges(url: string): Promise<Map<string, number>> {
  const response = await request(`${url}/metrics`, { headers: { 'x-api-key': OPERATOR_KEY } });
  const text = await response.body.text();
  const ages = new Map<string, number>();
  const line = /^nextrec_model_age_seconds\{[^}]*tenant="bench"[^}]*model="([^"]+)"[^}]*\} (\S+)$/gm;
  for (const [, model, age] of text.matchAll(line)) ages.set(model, Number(age));
  return ages;
}

const { daemon, headers, stop } = await startBenchDaemon('freshness');
try {
  const shop = await loadShop(daemon.url, headers, benchShop(items, interactions));
  console.log(`loaded the large tenant: ${items} items, ${interactions} interactions`);

  const small: Record<string, string>[] = [];
  for (let n = 0; n < tenants; n++) {
    const tenantId = `small${n}`;
    const { apiKey } = (await postJson(
      `${daemon.url}/tenants`,
      { 'x-api-key': OPERATOR_KEY },
      { tenantId },
      201,
    )) as BenchCredentials;
    const tenantHeaders = { 'x-tenant-id': tenantId, 'x-api-key': apiKey };
    await postJson(`${daemon.url}/ingestion/items`, tenantHeaders, { items: CO_VIEW_ITEMS }, 200);
    const first = coViews(FIRST_USERS, 'c', 30);
    await postJson(`${daemon.url}/ingestion/interactions`, tenantHeaders, { interactions: first }, 200);
    small.push(tenantHeaders);
  }
  const firstStarted = Date.now();
  const firstLags = await Promise.all(small.map((h) => lagUntilFirst(daemon.url, h, 'c', firstStarted)));
  console.log(`small tenants' first models: all within ${Math.max(...firstLags)} ms of the last write`);

  // The large tenant's models become stale: they build from here on.
  const stale = Math.ceil(interactions * STALE_SHARE);
  await postRandomInteractions(daemon.url, headers, shop, stale, BURST_BATCH, new Rng(2026, 12));
  const burstEnded = Date.now();
  const agesBefore = await modelAges(daemon.url);
  const swaps = new Map<string, number>();
  let watching = true;
  const watch = (async () => {
    while (watching) {
      await sleep(1_000);
      for (const [model, age] of await modelAges(daemon.url)) {
        const before = (agesBefore.get(model) ?? Infinity) + (Date.now() - burstEnded) / 1_000;
        if (!swaps.has(model) && age < before - 2) swaps.set(model, Date.now() - burstEnded);
      }
    }
  })();

  const lags = await Promise.all(
    small.map(async (tenantHeaders, n) => {
      await sleep((n * spreadMs) / tenants);
      const written = coViews(NEW_USERS, 'b', 10);
      await postJson(`${daemon.url}/ingestion/interactions`, tenantHeaders, { interactions: written }, 200);
      const at = Date.now();
      return { lag: await lagUntilFirst(daemon.url, tenantHeaders, 'b', at), at: at - burstEnded };
    }),
  );
  watching = false;
  await watch;

  const sorted = lags.map(({ lag }) => lag).sort((a, b) => a - b);
  const over = lags.filter(({ lag }) => lag > BOUND_MS);
  console.log(
    JSON.stringify({
      case: `${tenants} small tenants writing over ${spreadMs / 1_000} s while the large tenant builds`,
      lagMs: { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), max: sorted.at(-1) },
      over5s: over.length,
      writesFromS: Math.round(lags[0].at / 1_000),
      writesToS: Math.round(lags.at(-1)!.at / 1_000),
      largeTenantSwapsS: Object.fromEntries([...swaps].map(([model, ms]) => [model, Math.round(ms / 1_000)])),
    }),
  );
  if (swaps.size === 0) console.log('the large tenant swapped in no model while the small tenants wrote');
  if (over.length > 0) process.exitCode = 1;
} finally {
  await stop();
}
