import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { generateShop, type ShopItem } from '../fixtures/shop.js';
import { OPERATOR_KEY, startBenchDaemon, type BenchDaemon } from './support/bench-daemon.js';
import type { ChildServer } from './support/child-server.js';
import { positiveInteger } from './support/options.js';
import { postJson } from './support/shop-loader.js';

/**
 * A catalog feed's sync: a local source serves the generated shop's items in cursor pages, and the daemon
 * reads, maps, stages and applies them. Timed for a first sync (every item new, so the daemon's catalog
 * grows by all of them) and again with the source unchanged (the sync's own cost), with the daemon's
 * peak resident memory during each, read from /proc. Between the two, the daemon is followed until the
 * vectors of every new item serve, with its peak and settled resident memory. For scale, the same items
 * are then posted to `/ingestion/items` of a fresh daemon in batches of 5,000, measured the same way.
 */

const TARGET_ITEMS_PER_S = 20_000;
const TARGET_RSS_GROWTH_MIB = 200;
const INGEST_BATCH = 5_000;
const MIB = 1024 * 1024;

interface Options {
  items: number;
  pageSize: number;
}

function parseOptions(argv: string[]): Options {
  // Not strict: bench/run forwards the same arguments to every benchmark.
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      items: { type: 'string', default: '100000' },
      'page-size': { type: 'string', default: '1000' },
    },
  });
  return {
    items: positiveInteger('--items', values.items),
    pageSize: positiveInteger('--page-size', values['page-size']),
  };
}

/** A shop item as the source lists it. */
function sourceRecord(item: ShopItem) {
  return {
    id: item.externalId,
    title: item.attributes.name,
    pricing: { amount: String(item.attributes.price), currency: 'EUR' },
    department: item.category,
    media: [{ url: `https://img.example/${item.externalId}.jpg` }],
    brand: item.attributes.brand,
    stock: item.attributes.stock,
    tags: item.attributes.tags,
  };
}

/** What the feed's mapping rules make of a record. */
const MAPPING = [
  { property: 'title', path: 'title', dataType: 'string', target: 'name' },
  { property: 'price', path: 'pricing.amount', dataType: 'double', target: 'basePrice' },
  { property: 'image', path: 'media[0].url', dataType: 'image', target: 'coverImage' },
  { property: 'department', path: 'department', dataType: 'enum', target: 'category' },
  { property: 'brand', path: 'brand', dataType: 'string', target: 'attributes' },
  { property: 'stock', path: 'stock', dataType: 'int', target: 'attributes' },
  { property: 'tags', path: 'tags', dataType: 'enum', target: 'attributes' },
];

/** The same item as an ingestion upsert, for the baseline. */
function ingestionItem(item: ShopItem) {
  return {
    externalId: item.externalId,
    category: item.category,
    attributes: {
      name: item.attributes.name,
      price: item.attributes.price,
      image: `https://img.example/${item.externalId}.jpg`,
      brand: item.attributes.brand,
      stock: item.attributes.stock,
      tags: item.attributes.tags,
    },
  };
}

/** The source's pages, serialized before any timing: `?cursor=<n>` is page n, the last has no next. */
function sourcePages(items: ShopItem[], pageSize: number): Buffer[] {
  const pages: Buffer[] = [];
  for (let start = 0, page = 0; start < items.length; start += pageSize, page++) {
    const records = items.slice(start, start + pageSize).map(sourceRecord);
    const next = start + pageSize < items.length ? String(page + 1) : null;
    pages.push(Buffer.from(JSON.stringify({ data: { products: records }, paging: { next } })));
  }
  return pages;
}

async function startSource(pages: Buffer[]): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const page = pages[Number(new URL(req.url!, 'http://source').searchParams.get('cursor') ?? 0)];
    if (!page) {
      res.statusCode = 404;
      return void res.end();
    }
    res.setHeader('content-type', 'application/json');
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/products`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM). */
function memory(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Resets the process's peak resident size to its current one, where the kernel allows it. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

interface Measured<T> {
  value: T;
  seconds: number;
  /** Resident bytes before, and at the peak during, the work. */
  before: number;
  peak: number;
}

/** Times `work` and reads the daemon's resident memory before it and at its peak during it. */
async function measured<T>(daemon: ChildServer, work: () => Promise<T>): Promise<Measured<T>> {
  const before = memory(daemon.pid, 'VmRSS');
  const peakReset = resetPeak(daemon.pid);
  // Sampled too, for a kernel that keeps the peak from being reset.
  let sampled = before;
  const sampler = setInterval(() => (sampled = Math.max(sampled, memory(daemon.pid, 'VmRSS'))), 20);
  try {
    const started = process.hrtime.bigint();
    const value = await work();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const peak = peakReset ? Math.max(memory(daemon.pid, 'VmHWM'), sampled) : sampled;
    return { value, seconds, before, peak };
  } finally {
    clearInterval(sampler);
  }
}

interface Aftermath {
  /** Seconds from the sync's answer until the vectors build served every item (undefined: not in 180 s). */
  vectorsServedAfter: number | undefined;
  /** The daemon's peak resident bytes over that time, and its resident bytes once idle after it. */
  peak: number;
  settled: number;
}

/**
 * What follows a first sync: the daemon builds the new items' vectors (a change of more items than its
 * delta takes waits whole for that build; a smaller one it embeds itself). Follows it, sampling the
 * daemon's resident memory, until the vectors build serves `items` items (GET /debug/memory) and the
 * daemon is idle.
 */
async function aftermath(bench: BenchDaemon, items: number): Promise<Aftermath> {
  const followed = await measured(bench.daemon, async () => {
    const started = Date.now();
    let servedAfter: number | undefined;
    while (servedAfter === undefined && Date.now() - started < 180_000) {
      const response = await request(`${bench.daemon.url}/debug/memory`, {
        headers: { 'x-api-key': OPERATOR_KEY },
      });
      const report = (await response.body.json()) as {
        tenants: Record<string, { models: { vectors: { source: number } } }>;
      };
      if (report.tenants.bench.models.vectors.source >= items) servedAfter = (Date.now() - started) / 1000;
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await untilIdle(bench.daemon);
    return servedAfter;
  });
  return {
    vectorsServedAfter: followed.value,
    peak: followed.peak,
    settled: memory(bench.daemon.pid, 'VmRSS'),
  };
}

/** Waits until the daemon used less than a tenth of a core over a second (at most 60 s). */
async function untilIdle(daemon: ChildServer): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = daemon.cpuSeconds();
  while (last !== undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const now = daemon.cpuSeconds()!;
    if (now - last < 0.1) return;
    last = now;
  }
}

interface SyncResult {
  upserted: number;
  markedUnavailable: number;
  errors: unknown[];
}

async function sync(bench: BenchDaemon, feedId: string): Promise<SyncResult> {
  const response = await request(`${bench.daemon.url}/catalog/feeds/${feedId}/sync`, {
    method: 'POST',
    headers: bench.headers,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`sync answered ${response.statusCode}: ${text}`);
  return JSON.parse(text) as SyncResult;
}

async function measureFeed(items: ShopItem[], pageSize: number) {
  const pages = sourcePages(items, pageSize);
  const source = await startSource(pages);
  // The source runs on 127.0.0.1, a private address feeds reach only when allowed.
  const bench = await startBenchDaemon('feeds', { NEXTREC_FEED_PRIVATE_NETWORKS: 'true' });
  try {
    const { url } = bench.daemon;
    const feed = (await postJson(
      `${url}/catalog/feeds`,
      bench.headers,
      {
        sourceType: 'json_url',
        url: source.url,
        itemsPath: '$.data.products',
        itemIdPath: 'id',
        pagination: { mode: 'cursor', cursorPath: '$.paging.next' },
        mappingRules: MAPPING,
      },
      201,
    )) as { id: string };
    await postJson(`${url}/catalog/feeds/${feed.id}/preview`, bench.headers, undefined, 200);
    await postJson(`${url}/catalog/feeds/${feed.id}/activate`, bench.headers, undefined, 200);
    await untilIdle(bench.daemon);
    const first = await measured(bench.daemon, () => sync(bench, feed.id));
    if (first.value.upserted !== items.length || first.value.errors.length > 0) {
      throw new Error(`the first sync answered ${JSON.stringify(first.value).slice(0, 500)}`);
    }
    // After a sync the daemon exports the new items to the lake and builds their vectors:
    // the second sync starts once that is done, so that it measures the sync alone.
    const after = await aftermath(bench, items.length);
    const again = await measured(bench.daemon, () => sync(bench, feed.id));
    return { pages: pages.length, first, after, again };
  } finally {
    await bench.stop();
    await source.close();
  }
}

async function measureIngestion(items: ShopItem[]) {
  const bodies: { items: ReturnType<typeof ingestionItem>[] }[] = [];
  for (let start = 0; start < items.length; start += INGEST_BATCH) {
    bodies.push({ items: items.slice(start, start + INGEST_BATCH).map(ingestionItem) });
  }
  const bench = await startBenchDaemon('feeds-ingest');
  try {
    await untilIdle(bench.daemon);
    return await measured(bench.daemon, async () => {
      for (const body of bodies)
        await postJson(`${bench.daemon.url}/ingestion/items`, bench.headers, body, 200);
    });
  } finally {
    await bench.stop();
  }
}

function mib(bytes: number): number {
  return Number((bytes / MIB).toFixed(1));
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  console.log(`feeds: ${options.items.toLocaleString('en-US')} items in pages of ${options.pageSize}...`);
  const { items } = generateShop({ items: options.items, users: 1, sessions: 1, interactions: 0 });
  const feed = await measureFeed(items, options.pageSize);
  const ingest = await measureIngestion(items);

  const itemsPerS = Math.round(items.length / feed.first.seconds);
  const growth = feed.first.peak - feed.first.before;
  const met = itemsPerS >= TARGET_ITEMS_PER_S && growth / MIB < TARGET_RSS_GROWTH_MIB;
  console.log(
    JSON.stringify({
      bench: 'feeds',
      items: items.length,
      pageSize: options.pageSize,
      pages: feed.pages,
      syncSeconds: Number(feed.first.seconds.toFixed(3)),
      itemsPerS,
      rssBeforeMiB: mib(feed.first.before),
      peakRssMiB: mib(feed.first.peak),
      rssGrowthMiB: mib(growth),
      vectorsServedAfterS: feed.after.vectorsServedAfter ?? null,
      aftermathPeakRssMiB: mib(feed.after.peak),
      settledRssMiB: mib(feed.after.settled),
      resyncItemsPerS: Math.round(items.length / feed.again.seconds),
      resyncRssGrowthMiB: mib(feed.again.peak - feed.again.before),
      ingestItemsPerS: Math.round(items.length / ingest.seconds),
      ingestRssGrowthMiB: mib(ingest.peak - ingest.before),
      targetItemsPerS: TARGET_ITEMS_PER_S,
      targetRssGrowthMiB: TARGET_RSS_GROWTH_MIB,
      met,
    }),
  );
  const count = items.length.toLocaleString('en-US');
  console.log(
    `first sync: ${count} items in ${feed.first.seconds.toFixed(2)} s = ${itemsPerS.toLocaleString('en-US')} items/s ` +
      `(target ${TARGET_ITEMS_PER_S.toLocaleString('en-US')}); daemon RSS ${mib(feed.first.before).toFixed(0)} → ` +
      `peak ${mib(feed.first.peak).toFixed(0)} MiB, +${mib(growth).toFixed(0)} MiB (target < ${TARGET_RSS_GROWTH_MIB}): ${met ? 'met' : 'NOT met'}`,
  );
  const served = feed.after.vectorsServedAfter;
  console.log(
    `after it: every item's vector served ${served === undefined ? 'NOT within 180 s' : `${served.toFixed(0)} s after the sync`}; ` +
      `RSS peak ${mib(feed.after.peak).toFixed(0)} MiB (+${mib(feed.after.peak - feed.first.before).toFixed(0)} over the start), ` +
      `${mib(feed.after.settled).toFixed(0)} MiB once idle (+${mib(feed.after.settled - feed.first.before).toFixed(0)})`,
  );
  console.log(
    `second sync, source unchanged: ${feed.again.seconds.toFixed(2)} s, RSS +${mib(feed.again.peak - feed.again.before).toFixed(0)} MiB at its peak`,
  );
  console.log(
    `the same items through POST /ingestion/items (batches of ${INGEST_BATCH.toLocaleString('en-US')}): ` +
      `${ingest.seconds.toFixed(2)} s, RSS +${mib(ingest.peak - ingest.before).toFixed(0)} MiB at its peak`,
  );
}

await main();
