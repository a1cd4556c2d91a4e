import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';

/**
 * Catalog feeds in Google Merchant (RSS 2.0, Atom), CSV and TSV formats against the real daemon, from a
 * node:http source on 127.0.0.1 serving documents shaped like Google's published examples, gzip or not,
 * whole or broken.
 */

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/feeds');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

/** Generated catalogs a test changes between syncs, and how their documents break when they do. */
const catalogs = new Map<string, number[]>();
const broken = new Map<string, 'truncated' | 'bad-row' | 'http-500'>();
const served: string[] = [];

function merchantDocument(numbers: number[], truncated: boolean): Buffer {
  const items = numbers
    .map(
      (n) =>
        `<item><g:id>m-${n}</g:id><title>Product ${n}</title><g:price>${n}.50 EUR</g:price>` +
        `<g:product_type>${n % 2 ? 'shoes' : 'bags'}</g:product_type>` +
        `<g:additional_image_link>https://img.example/${n}-a.jpg</g:additional_image_link>` +
        `<g:additional_image_link>https://img.example/${n}-b.jpg</g:additional_image_link></item>\n`,
    )
    .join('');
  const document =
    '<?xml version="1.0"?>\n<rss xmlns:g="http://base.google.com/ns/1.0" version="2.0"><channel>' +
    `<title>Shop</title>\n${items}</channel></rss>\n`;
  // Cut inside the last item: every item before it is well-formed, the document is not.
  return Buffer.from(truncated ? document.slice(0, document.lastIndexOf('<g:price>')) : document);
}

function csvDocument(numbers: number[], badRow: boolean): Buffer {
  const rows = numbers.map((n) => `c-${n},Product ${n},${n}.50 EUR,${n % 2 ? 'shoes' : 'bags'}`);
  if (badRow) rows.push('c-x,Product x,1.00 EUR,bags,one field too many');
  return Buffer.from(['id,title,price,product_type', ...rows].join('\n') + '\n');
}

function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url!, 'http://source');
  served.push(url.pathname);
  const [, kind, file] = url.pathname.split('/');
  if (kind === 'fixtures') {
    const name = file.replace(/\.gz$/, '');
    const body = fixture(name);
    if (url.searchParams.has('encoded')) {
      res.setHeader('content-encoding', 'gzip');
      return void res.end(gzipSync(body));
    }
    return void res.end(file.endsWith('.gz') ? gzipSync(body) : body);
  }
  const name = file.replace(/\..*$/, '');
  const numbers = catalogs.get(name) ?? [];
  const mode = broken.get(name);
  if (mode === 'http-500') {
    res.statusCode = 500;
    return void res.end('internal error');
  }
  if (kind === 'merchant') {
    res.setHeader('content-type', 'application/rss+xml');
    res.setHeader('content-encoding', 'gzip');
    return void res.end(gzipSync(merchantDocument(numbers, mode === 'truncated')));
  }
  if (kind === 'csv') {
    res.setHeader('content-type', 'text/csv');
    return void res.end(csvDocument(numbers, mode === 'bad-row'));
  }
  res.statusCode = 404;
  res.end();
}

let source: http.Server;
let sourceUrl: string;
let daemon: DaemonProcess;

beforeAll(async () => {
  source = http.createServer(serve);
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
  // The source is on 127.0.0.1, a private address feeds reach only when allowed.
  daemon = await startDaemonProcess({ env: { NEXTREC_FEED_PRIVATE_NETWORKS: 'true' } });
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
  source.closeAllConnections();
  await new Promise<void>((resolve) => source.close(() => resolve()));
});

async function tenant(name: string) {
  const headers = tenantHeaders(await createTenant(daemon.url, name));
  const api = (method: string, route: string, body?: unknown) =>
    call(daemon.url, method, route, { headers, body });
  const activeFeed = async (body: unknown): Promise<string> => {
    const created = await api('POST', '/catalog/feeds', body);
    expect(created.status).toBe(201);
    expect((await api('POST', `/catalog/feeds/${created.body.id}/preview`)).status).toBe(200);
    expect((await api('POST', `/catalog/feeds/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id as string;
  };
  const items = async () => {
    const listed = await api('GET', '/catalog/items?limit=1000');
    expect(listed.status).toBe(200);
    return listed.body.data as { externalId: string; available: boolean; attributes: object }[];
  };
  return { api, activeFeed, items };
}

/** Google's Merchant attributes, mapped. */
const MERCHANT_MAPPING = [
  { property: 'title', path: "$['g:title']", dataType: 'string', target: 'name' },
  { property: 'price', path: "$['g:price']", dataType: 'double', target: 'basePrice' },
  { property: 'image', path: "$['g:image_link']", dataType: 'image', target: 'coverImage' },
  { property: 'type', path: "$['g:product_type']", dataType: 'enum', target: 'category' },
  { property: 'brand', path: "$['g:brand']", dataType: 'string' },
  { property: 'shipping', path: "$['g:shipping']['g:price']", dataType: 'double' },
  { property: 'images', path: "$['g:additional_image_link']", dataType: 'enum' },
];

const merchantFeed = (url: string, extra: Record<string, unknown> = {}) => ({
  sourceType: 'google_merchant',
  url,
  itemIdPath: "$['g:id']",
  mappingRules: MERCHANT_MAPPING,
  ...extra,
});

describe('feed formats', () => {
  it('takes google_merchant, csv and tsv as sourceType, read with GET only', async () => {
    const t = await tenant('formats-config');
    for (const sourceType of ['google_merchant', 'csv', 'tsv']) {
      const created = await t.api('POST', '/catalog/feeds', {
        sourceType,
        url: `${sourceUrl}/fixtures/products.csv`,
        itemIdPath: 'id',
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ sourceType, state: 'draft', method: 'GET' });
      const post = await t.api('POST', '/catalog/feeds', {
        sourceType,
        url: `${sourceUrl}/fixtures/products.csv`,
        itemIdPath: 'id',
        method: 'POST',
      });
      expectError(post, 400, 'INVALID_BODY');
      expect(post.body.details).toContainEqual(expect.objectContaining({ path: 'method' }));
    }
    const unknown = await t.api('POST', '/catalog/feeds', {
      sourceType: 'xml',
      url: `${sourceUrl}/fixtures/products.csv`,
      itemIdPath: 'id',
    });
    expectError(unknown, 400, 'INVALID_BODY');
    expect(unknown.body.details).toContainEqual(expect.objectContaining({ path: 'sourceType' }));
  });

  it("previews Google's RSS 2.0 example: g: elements mapped, a price with its currency a number, bad records listed", async () => {
    const t = await tenant('formats-rss');
    const feed = (
      await t.api('POST', '/catalog/feeds', merchantFeed(`${sourceUrl}/fixtures/merchant-rss.xml`))
    ).body;
    const preview = await t.api('POST', `/catalog/feeds/${feed.id}/preview`);
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      items: [
        {
          externalId: 'STORE_GOOGLE_PIXEL',
          category: 'Phones',
          attributes: {
            name: 'Google Pixel - Black 32GB',
            price: 649,
            image: 'https://www.gstatic.com/images/pixel_black.png',
            brand: 'Google',
            shipping: 14.95,
            images: [
              'https://www.gstatic.com/images/pixel_black_back.png',
              'https://www.gstatic.com/images/pixel_black_side.png',
            ],
          },
        },
        {
          externalId: 'STORE_GOOGLE_NEST_MINI',
          category: 'Speakers',
          attributes: {
            name: 'Google Nest Mini - Chalk',
            price: 49,
            image: 'https://www.gstatic.com/images/nest_mini_chalk.png',
            brand: 'Google',
          },
        },
      ],
      total: 3,
      errors: [{ index: 2, message: 'price ($[\'g:price\']): expected a number, found string "call us"' }],
    });
    expect((await t.api('GET', `/catalog/feeds/${feed.id}`)).body.state).toBe('previewed');
    expect((await t.api('GET', '/catalog/items')).body.total).toBe(0);
  });

  it("previews Google's Atom example, gzip-compressed as a .gz file and by Content-Encoding", async () => {
    const t = await tenant('formats-atom');
    const rules = [
      { property: 'title', path: 'title', dataType: 'string', target: 'name' },
      { property: 'price', path: "$['g:price']", dataType: 'double', target: 'basePrice' },
      { property: 'link', path: 'link.href', dataType: 'image' },
    ];
    for (const url of [
      `${sourceUrl}/fixtures/merchant-atom.xml.gz`,
      `${sourceUrl}/fixtures/merchant-atom.xml?encoded`,
    ]) {
      const feed = (await t.api('POST', '/catalog/feeds', merchantFeed(url, { mappingRules: rules }))).body;
      const preview = await t.api('POST', `/catalog/feeds/${feed.id}/preview`);
      expect(preview.status).toBe(200);
      expect(preview.body).toMatchObject({ total: 2, errors: [] });
      expect(preview.body.items[1]).toEqual({
        externalId: 'STORE_GOOGLE_NEST_MINI',
        attributes: {
          name: 'Google Nest Mini - Chalk',
          price: 49,
          link: 'https://store.google.com/product/google_nest_mini',
        },
      });
    }
  });

  it('previews CSV and TSV by column name', async () => {
    const t = await tenant('formats-csv');
    const rules = [
      { property: 'title', path: 'title', dataType: 'string', target: 'name' },
      { property: 'price', path: 'price', dataType: 'double', target: 'basePrice' },
      { property: 'mpn', path: 'mpn', dataType: 'string' },
    ];
    const csv = (
      await t.api('POST', '/catalog/feeds', {
        sourceType: 'csv',
        url: `${sourceUrl}/fixtures/products.csv`,
        itemIdPath: 'id',
        mappingRules: rules,
      })
    ).body;
    const preview = await t.api('POST', `/catalog/feeds/${csv.id}/preview`);
    expect(preview.body).toEqual({
      items: [
        { externalId: 'A2B4', attributes: { name: 'Mens Pique Polo Shirt', price: 15 } },
        { externalId: 'B3C5', attributes: { name: 'Womens Rain Boots', price: 42.5, mpn: 'BT-42' } },
        { externalId: 'C4D6', attributes: { name: 'Travel Mug' } },
      ],
      total: 3,
      errors: [],
    });
    const tsv = (
      await t.api('POST', '/catalog/feeds', {
        sourceType: 'tsv',
        url: `${sourceUrl}/fixtures/products.tsv`,
        itemIdPath: '$.id',
        mappingRules: rules.slice(0, 2),
      })
    ).body;
    expect((await t.api('POST', `/catalog/feeds/${tsv.id}/preview`)).body).toMatchObject({
      total: 2,
      items: [{ externalId: 'A2B4' }, { externalId: 'B3C5', attributes: { price: 42.5 } }],
    });
  });

  it('answers 502 FEED_FETCH_FAILED for a preview of malformed XML or CSV, and leaves the draft a draft', async () => {
    const t = await tenant('formats-preview-fail');
    catalogs.set('preview-fail', [1, 2, 3]);
    broken.set('preview-fail', 'truncated');
    const xml = (
      await t.api('POST', '/catalog/feeds', merchantFeed(`${sourceUrl}/merchant/preview-fail.xml`))
    ).body;
    const preview = await t.api('POST', `/catalog/feeds/${xml.id}/preview`);
    expectError(preview, 502, 'FEED_FETCH_FAILED');
    expect(preview.body.message).toMatch(/page 1 .*: the answer is not valid XML/);
    expect((await t.api('GET', `/catalog/feeds/${xml.id}`)).body.state).toBe('draft');

    broken.set('preview-fail', 'bad-row');
    const csv = (
      await t.api('POST', '/catalog/feeds', {
        sourceType: 'csv',
        url: `${sourceUrl}/csv/preview-fail.csv`,
        itemIdPath: 'id',
      })
    ).body;
    const csvPreview = await t.api('POST', `/catalog/feeds/${csv.id}/preview`);
    expectError(csvPreview, 502, 'FEED_FETCH_FAILED');
    expect(csvPreview.body.message).toMatch(/the answer is not valid CSV/);
    expect((await t.api('GET', `/catalog/feeds/${csv.id}`)).body.state).toBe('draft');
  });
});

describe('syncing a Merchant or CSV feed', () => {
  it('syncs a gzip Merchant feed of several batches in one request, whatever pagination says; drops, brings back; a broken document changes nothing', async () => {
    const t = await tenant('formats-sync-xml');
    const all = Array.from({ length: 2500 }, (_, i) => i);
    catalogs.set('sync-xml', all);
    const rules = [
      { property: 'title', path: 'title', dataType: 'string', target: 'name' },
      { property: 'price', path: "$['g:price']", dataType: 'double', target: 'basePrice' },
      { property: 'type', path: "$['g:product_type']", dataType: 'enum', target: 'category' },
      { property: 'images', path: "$['g:additional_image_link']", dataType: 'enum' },
    ];
    const id = await t.activeFeed(
      merchantFeed(`${sourceUrl}/merchant/sync-xml.xml`, {
        mappingRules: rules,
        itemsPath: '$.ignored',
        pagination: { mode: 'limit_offset', pageSize: 10 },
      }),
    );
    const before = served.length;
    const first = await t.api('POST', `/catalog/feeds/${id}/sync`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      upserted: 2500,
      markedUnavailable: 0,
      errors: [],
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    expect(served.slice(before)).toEqual(['/merchant/sync-xml.xml']);
    expect((await t.api('GET', '/catalog/items/m-2499')).body).toMatchObject({
      externalId: 'm-2499',
      category: 'shoes',
      available: true,
      feedManaged: true,
      attributes: {
        name: 'Product 2499',
        price: 2499.5,
        images: ['https://img.example/2499-a.jpg', 'https://img.example/2499-b.jpg'],
      },
    });

    // Two items leave the source; one comes back later.
    catalogs.set(
      'sync-xml',
      all.filter((n) => n !== 7 && n !== 1500),
    );
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 2498,
      markedUnavailable: 2,
    });
    expect((await t.api('GET', '/catalog/items/m-1500')).body).toMatchObject({ available: false });

    // A document cut short after 2,499 well-formed items, or an error status: 502, nothing changes.
    catalogs.set('sync-xml', [...all, 2500]);
    const stored = await t.items();
    for (const mode of ['truncated', 'http-500'] as const) {
      broken.set('sync-xml', mode);
      const failed = await t.api('POST', `/catalog/feeds/${id}/sync`);
      expectError(failed, 502, 'FEED_FETCH_FAILED');
      expect(failed.body.message).toContain('nothing changed');
      expect(await t.items()).toEqual(stored);
      expect((await t.api('GET', `/catalog/feeds/${id}`)).body).toMatchObject({
        state: 'active',
        lastSync: { status: 'failed' },
      });
    }
    expectError(await t.api('GET', '/catalog/items/m-2500'), 404, 'NOT_FOUND');
    expect((await t.api('GET', '/catalog/items/m-1500')).body).toMatchObject({ available: false });
    expect((await t.api('GET', '/catalog/items')).body.total).toBe(2500);

    broken.delete('sync-xml');
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 2501,
      markedUnavailable: 0,
    });
    expect((await t.api('GET', '/catalog/items/m-1500')).body).toMatchObject({ available: true });
  });

  it('syncs a CSV feed, and a malformed one changes nothing', async () => {
    const t = await tenant('formats-sync-csv');
    catalogs.set('sync-csv', [1, 2, 3, 4]);
    const id = await t.activeFeed({
      sourceType: 'csv',
      url: `${sourceUrl}/csv/sync-csv.csv`,
      itemIdPath: 'id',
      mappingRules: [
        { property: 'title', path: 'title', dataType: 'string', target: 'name' },
        { property: 'price', path: 'price', dataType: 'double', target: 'basePrice' },
        { property: 'type', path: 'product_type', dataType: 'enum', target: 'category' },
      ],
    });
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 4,
      markedUnavailable: 0,
      errors: [],
    });
    expect((await t.api('GET', '/catalog/items/c-3')).body).toMatchObject({
      category: 'shoes',
      attributes: { name: 'Product 3', price: 3.5 },
      feedManaged: true,
    });
    const stored = await t.items();
    catalogs.set('sync-csv', [1, 2]);
    broken.set('sync-csv', 'bad-row');
    const failed = await t.api('POST', `/catalog/feeds/${id}/sync`);
    expectError(failed, 502, 'FEED_FETCH_FAILED');
    expect(failed.body.message).toMatch(/the answer is not valid CSV: .*; nothing changed$/);
    expect(await t.items()).toEqual(stored);
    broken.delete('sync-csv');
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 2,
      markedUnavailable: 2,
    });
  });
});
