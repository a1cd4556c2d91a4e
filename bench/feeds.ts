import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { generateShop, type ShopItem } from '../fixtures/shop.js';
import { OPERATOR_KEY, startBenchDaemon, type BenchDaemon } from './support/bench-daemon.js';
import { measured, MIB, mib, procStatus, waitForDaemonIdle } from './support/daemon-memory.js';
import { positiveInteger } from './support/options.js';
import { postJson } from './support/shop-loader.js';

/**
 * A catalog feed's sync, in each of three formats, each against a daemon of its own: JSON in cursor pages
 * (`json_url`), one Google Merchant RSS 2.0 document sent gzip-compressed (`google_merchant`), and one CSV
 * document (`csv`), all listing the generated shop's items; the daemon reads, maps, stages and applies
 * them. Timed for a first sync (every item new, so the daemon's catalog grows by all of them) and again
 * with the source unchanged (the sync's own cost), with the daemon's peak resident memory during each,
 * read from /proc. Between the two, the daemon is followed until the vectors of every new item serve, with
 * its peak and settled resident memory. For scale, the same items are then posted to `/ingestion/items` of
 * a fresh daemon in batches of 5,000, measured the same way; the Merchant and CSV syncs are also given as
 * ratios to the JSON sync of the same run.
 */

const TARGET_ITEMS_PER_S = 20_000;
const TARGET_RSS_GROWTH_MIB = 200;
const INGEST_BATCH = 5_000;

const FORMATS = ['json', 'merchant', 'csv'] as const;
type Format = (typeof FORMATS)[number];

interface Options {
  items: number;
  pageSize: number;
  formats: Format[];
}

function parseOptions(argv: string[]): Options {
  // Not strict: bench/run forwards the same arguments to every benchmark.
  const { values } = parseArgs({
    args: argv,
    strict: false,
    options: {
      items: { type: 'string', default: '100000' },
      'page-size': { type: 'string', default: '1000' },
      formats: { type: 'string', default: FORMATS.join(',') },
    },
  });
  const formats = String(values.formats).split(',');
  const unknown = formats.find((format) => !FORMATS.includes(format as Format));
  if (unknown !== undefined) throw new Error(`--formats: '${unknown}' is not one of ${FORMATS.join(', ')}`);
  return {
    items: positiveInteger('--items', values.items),
    pageSize: positiveInteger('--page-size', values['page-size']),
    formats: formats as Format[],
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

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const xml = (value: unknown) => String(value).replace(/[&<>]/g, (char) => XML_ESCAPES[char]);

/** A shop item as a Merchant feed's `<item>` (the g: attributes Google's RSS 2.0 example uses). */
function merchantItem(item: ShopItem): string {
  const { attributes } = item;
  const highlights = (attributes.tags as string[])
    .map((tag) => `<g:product_highlight>${xml(tag)}</g:product_highlight>`)
    .join('');
  return (
    `<item><g:id>${xml(item.externalId)}</g:id><g:title>${xml(attributes.name)}</g:title>` +
    `<g:link>https://shop.example/p/${xml(item.externalId)}</g:link>` +
    `<g:image_link>https://img.example/${xml(item.externalId)}.jpg</g:image_link>` +
    `<g:condition>new</g:condition><g:availability>in_stock</g:availability>` +
    `<g:price>${xml(attributes.price)} EUR</g:price><g:brand>${xml(attributes.brand)}</g:brand>` +
    `<g:product_type>${xml(item.category)}</g:product_type>` +
    `<g:sell_on_google_quantity>${xml(attributes.stock)}</g:sell_on_google_quantity>${highlights}</item>\n`
  );
}

const MERCHANT_MAPPING = [
  { property: 'title', path: "$['g:title']", dataType: 'string', target: 'name' },
  { property: 'price', path: "$['g:price']", dataType: 'double', target: 'basePrice' },
  { property: 'image', path: "$['g:image_link']", dataType: 'image', target: 'coverImage' },
  { property: 'department', path: "$['g:product_type']", dataType: 'enum', target: 'category' },
  { property: 'brand', path: "$['g:brand']", dataType: 'string', target: 'attributes' },
  { property: 'stock', path: "$['g:sell_on_google_quantity']", dataType: 'int', target: 'attributes' },
  { property: 'tags', path: "$['g:product_highlight']", dataType: 'enum', target: 'attributes' },
];

const csvField = (value: unknown) => {
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** A shop item as a CSV row: id, title, price, image_link, product_type, brand, quantity, tags. */
function csvRow(item: ShopItem): string {
  const { attributes } = item;
  return (
    [
      item.externalId,
      attributes.name,
      `${String(attributes.price)} EUR`,
      `https://img.example/${item.externalId}.jpg`,
      item.category,
      attributes.brand,
      attributes.stock,
      (attributes.tags as string[]).join('|'),
    ]
      .map(csvField)
      .join(',') + '\n'
  );
}

const CSV_MAPPING = [
  { property: 'title', path: 'title', dataType: 'string', target: 'name' },
  { property: 'price', path: 'price', dataType: 'double', target: 'basePrice' },
  { property: 'image', path: 'image_link', dataType: 'image', target: 'coverImage' },
  { property: 'department', path: 'product_type', dataType: 'enum', target: 'category' },
  { property: 'brand', path: 'brand', dataType: 'string', target: 'attributes' },
  { property: 'stock', path: 'quantity', dataType: 'int', target: 'attributes' },
  { property: 'tags', path: 'tags', dataType: 'string', target: 'attributes' },
];

/** A source's answers, made before any timing, and the feed that reads them. */
interface Source {
  /** `?cursor=<n>` is answer n (JSON); a document has one. */
  answers: Buffer[];
  /** Bytes of the answers as the daemon reads them (decompressed). */
  bytes: number;
  gzip: boolean;
  feed: (url: string) => Record<string, unknown>;
}

function sourceOf(format: Format, items: ShopItem[], pageSize: number): Source {
  if (format === 'json') {
    const answers = sourcePages(items, pageSize);
    return {
      answers,
      bytes: answers.reduce((sum, answer) => sum + answer.length, 0),
      gzip: false,
      feed: (url) => ({
        sourceType: 'json_url',
        url,
        itemsPath: '$.data.products',
        itemIdPath: 'id',
        pagination: { mode: 'cursor', cursorPath: '$.paging.next' },
        mappingRules: MAPPING,
      }),
    };
  }
  if (format === 'merchant') {
    const document = Buffer.from(
      '<?xml version="1.0"?>\n<rss xmlns:g="http://base.google.com/ns/1.0" version="2.0">\n<channel>\n' +
        '<title>bench shop</title><link>https://shop.example</link><description>generated</description>\n' +
        items.map(merchantItem).join('') +
        '</channel>\n</rss>\n',
    );
    return {
      answers: [gzipSync(document)],
      bytes: document.length,
      gzip: true,
      feed: (url) => ({
        sourceType: 'google_merchant',
        url,
        itemIdPath: "$['g:id']",
        mappingRules: MERCHANT_MAPPING,
        maxBytes: 1024 * 1024 * 1024,
        timeoutMs: 600_000,
      }),
    };
  }
  const document = Buffer.from(
    'id,title,price,image_link,product_type,brand,quantity,tags\n' + items.map(csvRow).join(''),
  );
  return {
    answers: [document],
    bytes: document.length,
    gzip: false,
    feed: (url) => ({
      sourceType: 'csv',
      url,
      itemIdPath: 'id',
      mappingRules: CSV_MAPPING,
      maxBytes: 1024 * 1024 * 1024,
      timeoutMs: 600_000,
    }),
  };
}

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

async function startSource(source: Source): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const page = source.answers[Number(new URL(req.url!, 'http://source').searchParams.get('cursor') ?? 0)];
    if (!page) {
      res.statusCode = 404;
      return void res.end();
    }
    if (source.gzip) res.setHeader('content-encoding', 'gzip');
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/products`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
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
    await waitForDaemonIdle(bench.daemon);
    return servedAfter;
  });
  return {
    vectorsServedAfter: followed.value,
    peak: followed.peak,
    settled: procStatus(bench.daemon.pid, 'VmRSS'),
  };
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

async function measureFeed(format: Format, items: ShopItem[], pageSize: number) {
  const made = sourceOf(format, items, pageSize);
  const source = await startSource(made);
  // The source runs on 127.0.0.1, a private address feeds reach only when allowed.
  const bench = await startBenchDaemon(`feeds-${format}`, { NEXTREC_FEED_PRIVATE_NETWORKS: 'true' });
  try {
    const { url } = bench.daemon;
    const feed = (await postJson(`${url}/catalog/feeds`, bench.headers, made.feed(source.url), 201)) as {
      id: string;
    };
    await postJson(`${url}/catalog/feeds/${feed.id}/preview`, bench.headers, undefined, 200);
    await postJson(`${url}/catalog/feeds/${feed.id}/activate`, bench.headers, undefined, 200);
    await waitForDaemonIdle(bench.daemon);
    const first = await measured(bench.daemon, () => sync(bench, feed.id));
    if (first.value.upserted !== items.length || first.value.errors.length > 0) {
      throw new Error(`the first sync answered ${JSON.stringify(first.value).slice(0, 500)}`);
    }
    // After a sync the daemon exports the new items to the lake and builds their vectors:
    // the second sync starts once that is done, so that it measures the sync alone.
    const after = await aftermath(bench, items.length);
    const again = await measured(bench.daemon, () => sync(bench, feed.id));
    return { answers: made.answers.length, bytes: made.bytes, first, after, again };
  } catch (error) {
    throw new Error(`the ${format} feed: ${(error as Error).message}`, { cause: error });
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
    await waitForDaemonIdle(bench.daemon);
    return await measured(bench.daemon, async () => {
      for (const body of bodies)
        await postJson(`${bench.daemon.url}/ingestion/items`, bench.headers, body, 200);
    });
  } finally {
    await bench.stop();
  }
}

type FeedRun = Awaited<ReturnType<typeof measureFeed>>;

function figures(feed: FeedRun, items: number) {
  const itemsPerS = Math.round(items / feed.first.seconds);
  const growth = feed.first.peak - feed.first.before;
  return {
    answers: feed.answers,
    sourceMiB: mib(feed.bytes),
    syncSeconds: Number(feed.first.seconds.toFixed(3)),
    itemsPerS,
    rssBeforeMiB: mib(feed.first.before),
    peakRssMiB: mib(feed.first.peak),
    rssGrowthMiB: mib(growth),
    vectorsServedAfterS: feed.after.vectorsServedAfter ?? null,
    aftermathPeakRssMiB: mib(feed.after.peak),
    settledRssMiB: mib(feed.after.settled),
    resyncItemsPerS: Math.round(items / feed.again.seconds),
    resyncRssGrowthMiB: mib(feed.again.peak - feed.again.before),
    met: itemsPerS >= TARGET_ITEMS_PER_S && growth / MIB < TARGET_RSS_GROWTH_MIB,
  };
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  console.log(
    `feeds: ${options.items.toLocaleString('en-US')} items as ${options.formats.join(', ')} ` +
      `(JSON in pages of ${options.pageSize})...`,
  );
  const { items } = generateShop({ items: options.items, users: 1, sessions: 1, interactions: 0 });
  const results = new Map<Format, ReturnType<typeof figures>>();
  for (const format of options.formats) {
    results.set(format, figures(await measureFeed(format, items, options.pageSize), items.length));
  }
  const ingest = await measureIngestion(items);
  const json = results.get('json');
  const ratios = Object.fromEntries(
    [...results].flatMap(([format, result]) =>
      json && format !== 'json'
        ? [[`${format}ToJsonItemsPerS`, Number((result.itemsPerS / json.itemsPerS).toFixed(2))]]
        : [],
    ),
  );
  console.log(
    JSON.stringify({
      bench: 'feeds',
      items: items.length,
      pageSize: options.pageSize,
      formats: Object.fromEntries(results),
      ...ratios,
      ingestItemsPerS: Math.round(items.length / ingest.seconds),
      ingestRssGrowthMiB: mib(ingest.peak - ingest.before),
      targetItemsPerS: TARGET_ITEMS_PER_S,
      targetRssGrowthMiB: TARGET_RSS_GROWTH_MIB,
      met: [...results.values()].every((result) => result.met),
    }),
  );
  const count = items.length.toLocaleString('en-US');
  for (const [format, result] of results) {
    console.log(
      `${format} (${result.answers} answer${result.answers === 1 ? '' : 's'}, ${result.sourceMiB} MiB): ` +
        `first sync of ${count} items in ${result.syncSeconds.toFixed(2)} s = ` +
        `${result.itemsPerS.toLocaleString('en-US')} items/s (target ${TARGET_ITEMS_PER_S.toLocaleString('en-US')}); ` +
        `daemon RSS ${result.rssBeforeMiB.toFixed(0)} → peak ${result.peakRssMiB.toFixed(0)} MiB, ` +
        `+${result.rssGrowthMiB.toFixed(0)} MiB (target < ${TARGET_RSS_GROWTH_MIB}): ${result.met ? 'met' : 'NOT met'}`,
    );
    const served = result.vectorsServedAfterS;
    console.log(
      `  after it: every item's vector served ${served === null ? 'NOT within 180 s' : `${served.toFixed(0)} s after the sync`}; ` +
        `RSS peak ${result.aftermathPeakRssMiB.toFixed(0)} MiB, ${result.settledRssMiB.toFixed(0)} MiB once idle; ` +
        `second sync, source unchanged: ${result.resyncItemsPerS.toLocaleString('en-US')} items/s, ` +
        `RSS +${result.resyncRssGrowthMiB.toFixed(0)} MiB at its peak`,
    );
  }
  for (const [name, ratio] of Object.entries(ratios)) console.log(`${name}: ${ratio}`);
  console.log(
    `the same items through POST /ingestion/items (batches of ${INGEST_BATCH.toLocaleString('en-US')}): ` +
      `${ingest.seconds.toFixed(2)} s, RSS +${mib(ingest.peak - ingest.before).toFixed(0)} MiB at its peak`,
  );
}

await main();
