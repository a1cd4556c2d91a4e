import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_BODY } from '../../../src/contract/feeds.js';
import { MalformedDocumentError } from '../../../src/feeds/answer.js';
import { csvRecords } from '../../../src/feeds/csv-records.js';
import { FeedFetchError, fetchPages } from '../../../src/feeds/fetch.js';
import { compileMapping } from '../../../src/feeds/mapping.js';
import { merchantRecords } from '../../../src/feeds/merchant-records.js';
import { OPEN_NETWORK } from '../../../src/feeds/network.js';

/** Merchant (RSS 2.0, Atom), CSV and TSV documents: parsed as they stream in, gzip or not. */

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/feeds');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

/** `text` in chunks of `size` bytes, as a body arrives. */
async function* chunked(text: string | Buffer, size = 7): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function all<T>(batches: AsyncIterable<T[]>): Promise<T[]> {
  const records: T[] = [];
  for await (const batch of batches) records.push(...batch);
  return records;
}

async function malformed(batches: AsyncIterable<unknown>): Promise<string> {
  try {
    for await (const batch of batches) void batch;
  } catch (error) {
    expect(error).toBeInstanceOf(MalformedDocumentError);
    return (error as Error).message;
  }
  throw new Error('the document parsed');
}

const rss = (items: string, namespace = 'xmlns:g="http://base.google.com/ns/1.0"') =>
  `<?xml version="1.0"?><rss ${namespace} version="2.0"><channel><title>Shop</title>${items}</channel></rss>`;

describe('Google Merchant XML', () => {
  it("reads Google's RSS 2.0 example: child elements by qualified name, repeated ones as arrays, nested ones as objects", async () => {
    const records = await all(merchantRecords(chunked(fixture('merchant-rss.xml'))));
    expect(records).toHaveLength(3);
    expect(records[0]).toEqual({
      'g:id': 'STORE_GOOGLE_PIXEL',
      'g:title': 'Google Pixel - Black 32GB',
      'g:description': 'Pixel is a phone with a high-resolution camera & <b>unlimited</b> storage',
      'g:link': 'https://store.google.com/product/pixel_phone?hl=en-US',
      'g:image_link': 'https://www.gstatic.com/images/pixel_black.png',
      'g:additional_image_link': [
        'https://www.gstatic.com/images/pixel_black_back.png',
        'https://www.gstatic.com/images/pixel_black_side.png',
      ],
      'g:condition': 'new',
      'g:availability': 'in_stock',
      'g:price': '649.00 USD',
      'g:shipping': { 'g:country': 'US', 'g:service': 'Standard', 'g:price': '14.95 USD' },
      'g:gtin': '8675309',
      'g:brand': 'Google',
      'g:mpn': 'G-2PW4100',
      'g:google_product_category': 'Electronics > Communications > Telephony > Mobile Phones',
      'g:product_type': 'Phones',
    });
    expect(records.map((record) => record['g:id'])).toEqual([
      'STORE_GOOGLE_PIXEL',
      'STORE_GOOGLE_NEST_MINI',
      'STORE_GOOGLE_CHROMECAST',
    ]);
  });

  it("reads Google's Atom example: unprefixed Atom elements by their name, an attribute-only link as its attributes", async () => {
    const records = await all(merchantRecords(chunked(fixture('merchant-atom.xml'), 64)));
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      'g:id': 'STORE_GOOGLE_PIXEL',
      title: 'Google Pixel - Black 32GB',
      link: { href: 'https://store.google.com/product/pixel_phone?hl=en-US' },
      summary: 'Pixel is a phone with a high-resolution camera',
      'g:price': '649.00 USD',
      'g:shipping': { 'g:country': 'US', 'g:service': 'Standard', 'g:price': '14.95 USD' },
    });
  });

  it("names Google's elements g: whatever prefix the document binds, leaves out empty ones, and keeps __proto__ an own name", async () => {
    const [record] = await all(
      merchantRecords(
        chunked(
          rss(
            '<item><m:id>1</m:id><m:sale_price>  </m:sale_price><__proto__>x</__proto__><title> Shoe </title></item>',
            'xmlns:m="http://base.google.com/ns/1.0"',
          ),
        ),
      ),
    );
    expect(Object.keys(record)).toEqual(['g:id', '__proto__', 'title']);
    expect(record['g:id']).toBe('1');
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(record, '__proto__')?.value).toBe('x');
  });

  it('resolves namespaces as they are declared and undeclared, on elements and attributes', async () => {
    const records = await all(
      merchantRecords(
        chunked(
          rss(
            '<item xmlns="http://base.google.com/ns/1.0"><id>1</id><price>9 EUR</price>' +
              '<image xmlns:x="http://base.google.com/ns/1.0" x:href="a.png" href="b.png" xmlns:y="urn:y" y:z="c"/>' +
              '<x:size xmlns:x="urn:other">M</x:size></item>' +
              '<item><g:id>2</g:id><id>plain</id></item>',
            'xmlns:g="http://base.google.com/ns/1.0"',
          ),
        ),
      ),
    );
    expect(records).toEqual([
      {
        'g:id': '1',
        'g:price': '9 EUR',
        'g:image': { 'g:href': 'a.png', href: 'b.png', 'y:z': 'c' },
        'x:size': 'M',
      },
      { 'g:id': '2', id: 'plain' },
    ]);
  });

  it('names elements right past the names it keeps resolved', async () => {
    const fields = Array.from({ length: 1500 }, (_, i) => `<m:f${i}>${i}</m:f${i}><f${i}>${i}</f${i}>`);
    const [record] = await all(
      merchantRecords(
        chunked(rss(`<item>${fields.join('')}</item>`, 'xmlns:m="http://base.google.com/ns/1.0"'), 4096),
      ),
    );
    expect(Object.keys(record)).toHaveLength(3000);
    expect(record['g:f1499']).toBe('1499');
    expect(record.f1499).toBe('1499');
    expect(record['g:f0']).toBe('0');
  });

  it('refuses what the namespaces of XML refuse, with the position', async () => {
    const refusals: [string, RegExp][] = [
      ['<item><m:id>1</m:id></item>', /^the answer is not valid XML: 1:\d+: unbound namespace prefix: "m"/],
      ['<item><g:id x:a="1">1</g:id></item>', /unbound namespace prefix: "x"/],
      ['<item><xmlns:id>1</xmlns:id></item>', /tags may not have "xmlns" as prefix/],
      ['<item><g:id:x>1</g:id:x></item>', /malformed name: g:id:x/],
      ['<item xmlns:h=""><g:id>1</g:id></item>', /invalid attempt to undefine prefix in XML 1\.0/],
      [
        '<item xmlns:xml="urn:x"><g:id>1</g:id></item>',
        /xml prefix must be bound to http:\/\/www\.w3\.org\/XML\/1998\/namespace/,
      ],
      [
        '<item><g:id xmlns:h="http://base.google.com/ns/1.0" g:a="1" h:a="2">1</g:id></item>',
        /duplicate attribute: \{http:\/\/base\.google\.com\/ns\/1\.0\}a/,
      ],
      // A prefix declared on an element is out of scope after it.
      ['<item><g:id xmlns:h="urn:h">1</g:id><h:x>2</h:x></item>', /unbound namespace prefix: "h"/],
    ];
    for (const [items, message] of refusals) {
      expect(await malformed(merchantRecords(chunked(rss(items))))).toMatch(message);
    }
  });

  it('gives items in batches of 1,000 as the document streams in, and an empty channel as no item', async () => {
    const items = Array.from({ length: 2500 }, (_, i) => `<item><g:id>${i}</g:id></item>`).join('');
    const sizes: number[] = [];
    for await (const batch of merchantRecords(chunked(rss(items), 4096))) sizes.push(batch.length);
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(await all(merchantRecords(chunked(rss(''))))).toEqual([]);
  });

  it('decodes the encoding the XML declaration names', async () => {
    const latin1 = Buffer.from(
      '<?xml version="1.0" encoding="ISO-8859-1"?>' +
        rss('<item><g:id>1</g:id><title>Café</title></item>').slice(21),
      'latin1',
    );
    expect(await all(merchantRecords(chunked(latin1)))).toEqual([{ 'g:id': '1', title: 'Café' }]);
  });

  it('refuses malformed XML, another root, and bytes that are not UTF-8', async () => {
    expect(await malformed(merchantRecords(chunked(rss('<item><g:id>1</g:id>'))))).toMatch(
      /^the answer is not valid XML: 1:\d+: unexpected close tag/,
    );
    expect(await malformed(merchantRecords(chunked('<rss><channel><item><g:id>1</g:id></item>')))).toMatch(
      /not valid XML/,
    );
    expect(await malformed(merchantRecords(chunked('{"items": []}')))).toMatch(/not valid XML/);
    expect(await malformed(merchantRecords(chunked('<products><product/></products>')))).toMatch(
      /root is <products>, not an RSS 2\.0 <rss> or an Atom <feed>/,
    );
    expect(await malformed(merchantRecords(chunked('')))).toMatch(/not valid XML/);
    expect(
      await malformed(merchantRecords(chunked(Buffer.from([...Buffer.from('<rss><x>'), 0xff, 0xfe]), 4))),
    ).toMatch(/its bytes are not utf-8/);
  });
});

describe('CSV and TSV', () => {
  it("reads a CSV like Google's example: a header row, quoted fields, empty cells left out", async () => {
    const records = await all(csvRecords(chunked(fixture('products.csv'), 5), ','));
    expect(records).toHaveLength(3);
    expect(records[0]).toEqual({
      id: 'A2B4',
      title: 'Mens Pique Polo Shirt',
      description: 'Thick cotton polo, in "classic" fit',
      link: 'https://www.example.com/clothing/mens/polo',
      condition: 'new',
      price: '15.00 USD',
      availability: 'in_stock',
      image_link: 'https://www.example.com/image1.jpg',
      gtin: '3234567890126',
      brand: 'Example',
      google_product_category: 'Apparel & Accessories > Clothing > Shirts & Tops',
    });
    expect(records[2]).not.toHaveProperty('price');
  });

  it('reads a TSV, a quote inside a field as a character', async () => {
    const records = await all(csvRecords(chunked(fixture('products.tsv')), '\t'));
    expect(records.map((record) => record.id)).toEqual(['A2B4', 'B3C5']);
    expect(records[0].description).toBe('Thick cotton polo, a 5" zip');
    expect(records[1].price).toBe('42.50 EUR');
  });

  it('drops a byte order mark, trims names and values, skips unnamed columns, and gathers a repeated name', async () => {
    const text = '\uFEFF id , tag,,tag\n 1 , a ,x, b \n2,,,c\n';
    expect(await all(csvRecords(chunked(text), ','))).toEqual([
      { id: '1', tag: ['a', 'b'] },
      { id: '2', tag: 'c' },
    ]);
  });

  it('refuses a row of another length, an open quote, and a document without a header', async () => {
    expect(await malformed(csvRecords(chunked('id,title\n1,a\n2,b,c\n'), ','))).toMatch(
      /^the answer is not valid CSV: .*Invalid Record Length/,
    );
    expect(await malformed(csvRecords(chunked('id\ttitle\n1\t"open\n'), '\t'))).toMatch(
      /^the answer is not valid TSV: .*Quote Not Closed/,
    );
    expect(await malformed(csvRecords(chunked(''), ','))).toBe('the answer is not CSV: it has no header row');
  });
});

describe('mapping a Merchant record', () => {
  it("reads $['g:…'] paths as members and takes a price with its currency as a double", () => {
    const mapper = compileMapping({
      itemIdPath: "$['g:id']",
      mappingRules: [
        { property: 'price', path: "$['g:price']", dataType: 'double', target: 'basePrice' },
        {
          property: 'shipping',
          path: "$['g:shipping']['g:price']",
          dataType: 'double',
          target: 'attributes',
        },
        { property: 'images', path: "$['g:additional_image_link']", dataType: 'enum', target: 'attributes' },
        { property: 'link', path: 'link.href', dataType: 'image', target: 'attributes' },
      ],
    });
    const outcome = mapper(
      {
        'g:id': 'p1',
        'g:price': '12.99 EUR',
        'g:shipping': { 'g:price': '4.95 EUR' },
        'g:additional_image_link': ['a', 'b'],
        link: { href: 'https://shop.example/p1' },
      },
      0,
    );
    // Relative paths name the same members.
    const relative = compileMapping({
      itemIdPath: 'g:id',
      mappingRules: [
        { property: 'shipping', path: 'g:shipping.g:price', dataType: 'double', target: 'attributes' },
      ],
    });
    expect(relative({ 'g:id': 'p1', 'g:shipping': { 'g:price': '4.95 EUR' } }, 0)).toEqual({
      ok: true,
      item: { externalId: 'p1', attributes: { shipping: 4.95 } },
    });
    expect(outcome).toEqual({
      ok: true,
      item: {
        externalId: 'p1',
        attributes: { price: 12.99, shipping: 4.95, images: ['a', 'b'], link: 'https://shop.example/p1' },
      },
    });
  });
});

describe('a double with its currency', () => {
  it('is read in every format, the currency dropped; anything else is still an error', () => {
    const mapper = compileMapping({
      itemIdPath: 'sku',
      mappingRules: [{ property: 'price', path: 'price', dataType: 'double', target: 'basePrice' }],
    });
    const price = (value: unknown) => {
      const outcome = mapper({ sku: 'a', price: value }, 0);
      return outcome.ok ? outcome.item.attributes.price : outcome.error.message;
    };
    expect(price('12.99 EUR')).toBe(12.99);
    expect(price(' 1500 usd ')).toBe(1500);
    expect(price(12.99)).toBe(12.99);
    expect(price('12.99')).toBe(12.99);
    for (const value of ['EUR 12.99', '12.99 EURO', '12.99 €', 'free EUR', '12.99EUR']) {
      expect(price(value)).toMatch(/expected a number, found string/);
    }
  });
});

describe('fetching a document', () => {
  let server: http.Server;
  let base: string;
  const requests: http.IncomingHttpHeaders[] = [];
  const ITEMS = Array.from({ length: 1200 }, (_, i) => `<item><g:id>${i}</g:id></item>`).join('');

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests.push(req.headers);
      const document = Buffer.from(rss(ITEMS));
      switch (new URL(req.url!, 'http://source').pathname) {
        case '/plain.xml':
          return res.end(document);
        case '/encoded.xml':
          res.setHeader('content-encoding', 'gzip');
          return res.end(gzipSync(document));
        case '/file.xml.gz':
          return res.end(gzipSync(document));
        case '/encoded-file.xml.gz':
          // A .gz file that the server also says is gzip-encoded: decompressed once by HTTP, once as a file.
          res.setHeader('content-encoding', 'gzip');
          return res.end(gzipSync(gzipSync(document)));
        case '/served-decoded.xml.gz':
          // A .gz file that the server decompressed on the way (its bytes are the document).
          return res.end(document);
        case '/broken.xml':
          res.setHeader('content-encoding', 'gzip');
          return res.end(gzipSync(document).subarray(0, 200));
        case '/brotli.xml':
          res.setHeader('content-encoding', 'br');
          return res.end(document);
        case '/truncated.xml':
          // Well-formed items, then the connection ends mid-document.
          return res.end(document.subarray(0, document.length - 100));
        case '/products.csv':
          return res.end(fixture('products.csv'));
        default:
          res.statusCode = 404;
          return res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const feed = (url: string, fields: Record<string, unknown> = {}) =>
    FEED_BODY.parse({ sourceType: 'google_merchant', url, itemIdPath: "$['g:id']", ...fields });

  async function pages(url: string, fields: Record<string, unknown> = {}) {
    const read: { number: number; records: unknown[] }[] = [];
    for await (const page of fetchPages(feed(url, fields), OPEN_NETWORK)) read.push(page);
    return read;
  }

  async function failure(url: string, fields: Record<string, unknown> = {}): Promise<string> {
    try {
      await pages(url, fields);
    } catch (error) {
      expect(error).toBeInstanceOf(FeedFetchError);
      return (error as Error).message;
    }
    throw new Error('the fetch did not fail');
  }

  it('reads one request, whatever pagination says, as page 1 in batches; gzip by Content-Encoding or a .gz URL', async () => {
    for (const name of [
      'plain.xml',
      'encoded.xml',
      'file.xml.gz',
      'encoded-file.xml.gz',
      'served-decoded.xml.gz',
    ]) {
      const before = requests.length;
      const read = await pages(`${base}/${name}`, {
        pagination: { mode: 'limit_offset', pageSize: 10 },
        itemsPath: '$.ignored',
      });
      expect(
        read.map((page) => [page.number, page.records.length]),
        name,
      ).toEqual([
        [1, 1000],
        [1, 200],
      ]);
      expect(requests.length - before).toBe(1);
    }
    expect(requests[0]['accept-encoding']).toBe('gzip');
    expect(requests[0].accept).toMatch(/^application\/rss\+xml/);
    const csv = [];
    for await (const page of fetchPages(
      FEED_BODY.parse({ sourceType: 'csv', url: `${base}/products.csv`, itemIdPath: 'id' }),
      OPEN_NETWORK,
    ))
      csv.push(...page.records);
    expect(csv).toHaveLength(3);
  });

  it('fails on broken gzip, an unsupported encoding, a truncated document, and maxBytes counted decompressed', async () => {
    expect(await failure(`${base}/broken.xml`)).toMatch(/^page 1 \(.*\/broken\.xml\): .*(gzip|end)/);
    expect(await failure(`${base}/brotli.xml`)).toMatch(/Content-Encoding br is not supported/);
    expect(await failure(`${base}/truncated.xml`)).toMatch(/^page 1 .*: the answer is not valid XML/);
    expect(await failure(`${base}/encoded.xml`, { maxBytes: 4096 })).toMatch(
      /longer than maxBytes \(4096 bytes\)/,
    );
  });
});
