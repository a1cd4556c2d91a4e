import { request } from 'undici';
import { generateInteractions, generateShop, type ShopItem } from '../../fixtures/shop.js';
import { postBatches, type Batch, type Target } from './load.js';

export interface ShopSize {
  items: number;
  users: number;
  sessions: number;
  interactions: number;
  /** Interactions fall in the `days` before `now`. */
  days: number;
  now: Date;
}

/** The ids that interactions mention: seeds with a history or neighbours, as real traffic mostly asks. */
export interface LoadedShop {
  itemIds: string[];
  userIds: string[];
}

const BATCH_SIZE = 5_000;
const CONCURRENCY = 4;

/** Posts the generated catalog, then its interactions, through the ingestion routes of `url`. */
export async function loadShop(
  url: string,
  headers: Record<string, string>,
  size: ShopSize,
): Promise<LoadedShop> {
  await loadItems(url, headers, size);
  return loadInteractions(url, headers, size);
}

/** Posts the generated catalog through `/ingestion/items` of `url`. */
export async function loadItems(url: string, headers: Record<string, string>, size: ShopSize): Promise<void> {
  await postItems(url, headers, shopItems(size));
}

/** The generated shop's catalog, as `loadItems` posts it. */
export function shopItems(size: ShopSize): ShopItem[] {
  return generateShop({ ...size, interactions: 0 }).items;
}

/** Posts `items` through `/ingestion/items` of `url` in batches of 5,000, each of which must upsert them all. */
export async function postItems(
  url: string,
  headers: Record<string, string>,
  items: ShopItem[],
): Promise<void> {
  for (let start = 0; start < items.length; start += BATCH_SIZE) {
    const batch = items.slice(start, start + BATCH_SIZE);
    const answer = await postJson(`${url}/ingestion/items`, headers, { items: batch }, 200);
    if ((answer as { upserted: number }).upserted !== batch.length) {
      throw new Error(`items upsert answered ${JSON.stringify(answer)} for ${batch.length} items`);
    }
  }
}

/** Posts the generated interactions through `/ingestion/interactions` of `url`. */
export async function loadInteractions(
  url: string,
  headers: Record<string, string>,
  size: ShopSize,
): Promise<LoadedShop> {
  // In time order, as a live stream or an exported backfill arrives: the generator interleaves sessions
  // from the whole window, and the daemon's windowed counters insert an out-of-order event by walking
  // back from the newest, which is quadratic over millions of shuffled events.
  const events = Array.from(generateInteractions(size)).sort((a, b) =>
    a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0,
  );
  const userIds = new Set<string>();
  const itemIds = new Set<string>();
  const batches: Batch[] = [];
  for (let start = 0; start < events.length; start += BATCH_SIZE) {
    const batch = events.slice(start, start + BATCH_SIZE);
    for (const event of batch) {
      if (event.userId !== undefined) userIds.add(event.userId);
      itemIds.add(event.itemId);
    }
    batches.push({ body: Buffer.from(JSON.stringify({ interactions: batch })), events: batch.length });
  }
  const target: Target = {
    url,
    path: '/ingestion/interactions',
    headers: { ...headers, 'content-type': 'application/json' },
  };
  const result = await postBatches(target, batches, CONCURRENCY);
  if (result.failures > 0) {
    throw new Error(`${result.failures} interaction batches failed, first: ${result.firstFailure}`);
  }
  return { itemIds: [...itemIds], userIds: [...userIds] };
}

/** POSTs a JSON body and returns the parsed answer, which must have the expected status. */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  expectedStatus: number,
): Promise<unknown> {
  const response = await request(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== expectedStatus) {
    throw new Error(`POST ${url} answered ${response.statusCode}: ${text.slice(0, 500)}`);
  }
  return JSON.parse(text);
}

/**
 * The generated shop the benchmarks load: about 25 interactions a user, 30% as many sessions as users,
 * over the 29 days before now.
 */
export function benchShop(items: number, interactions: number): ShopSize {
  const users = Math.max(1_000, Math.round(interactions / 25));
  return { items, users, sessions: Math.round(users * 0.3), interactions, days: 29, now: new Date() };
}

/**
 * Posts `count` random interactions of the shop's users and items (a tenth purchases) in batches of
 * `batch`: beyond the share of a model's interactions that makes it stale (docs/batch-models.md: 10%),
 * the daemon rebuilds the tenant's models.
 */
export async function postRandomInteractions(
  url: string,
  headers: Record<string, string>,
  shop: LoadedShop,
  count: number,
  batch: number,
  rng: { int(n: number): number },
): Promise<void> {
  const { userIds, itemIds } = shop;
  for (let sent = 0; sent < count; sent += batch) {
    const interactions = Array.from({ length: batch }, (_, i) => ({
      userId: userIds[rng.int(userIds.length)],
      itemId: itemIds[rng.int(itemIds.length)],
      type: i % 10 === 0 ? 'purchase' : 'view',
    }));
    await postJson(`${url}/ingestion/interactions`, headers, { interactions }, 200);
  }
}
