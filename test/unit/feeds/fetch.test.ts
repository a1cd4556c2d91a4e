import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_BODY } from '../../../src/contract/feeds.js';
import { FeedFetchError, fetchPages, type FeedSource } from '../../../src/feeds/fetch.js';
import { feedNetwork, isPrivateAddress, OPEN_NETWORK } from '../../../src/feeds/network.js';

interface Seen {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const seen: Seen[] = [];
let server: http.Server;
let base: string;

const RECORDS = Array.from({ length: 23 }, (_, i) => ({ sku: `s${i}` }));

function json(res: http.ServerResponse, value: unknown): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(value));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://localhost');
      seen.push({ method: req.method!, url, headers: req.headers, body });
      switch (url.pathname) {
        case '/all':
          return json(res, RECORDS);
        case '/cursor': {
          // Numeric cursors; the last page carries an empty one.
          const at = Number(url.searchParams.get('after') ?? 0);
          const size = Number(url.searchParams.get('limit') ?? 10);
          const page = RECORDS.slice(at, at + size);
          return json(res, {
            data: { items: page },
            meta: { next: at + size < RECORDS.length ? at + size : '' },
          });
        }
        case '/offset': {
          const offset = Number(url.searchParams.get('skip'));
          const limit = Number(url.searchParams.get('take'));
          return json(res, { results: RECORDS.slice(offset, offset + limit) });
        }
        case '/exact': {
          // 20 records in pages of 10: the third page is empty, which ends limit_offset too.
          const offset = Number(url.searchParams.get('offset'));
          return json(res, { results: RECORDS.slice(0, 20).slice(offset, offset + 10) });
        }
        case '/api':
          if (req.method !== 'POST' || req.headers.authorization !== 'Bearer secret') {
            res.statusCode = 401;
            return res.end();
          }
          return json(res, { groups: [{ items: RECORDS.slice(0, 2) }, { items: RECORDS.slice(2, 3) }] });
        case '/fails-on-page-2':
          if (url.searchParams.get('cursor')) {
            res.statusCode = 500;
            return res.end('boom');
          }
          return json(res, { items: RECORDS.slice(0, 5), next: 'p2' });
        case '/malformed':
          res.setHeader('content-type', 'application/json');
          return res.end('{"items": [');
        case '/slow':
          return setTimeout(() => json(res, []), 1500);
        case '/stalls': {
          res.setHeader('content-type', 'application/json');
          res.write('[');
          return setTimeout(() => res.end(']'), 1500);
        }
        case '/big':
          return json(res, { items: RECORDS, padding: 'x'.repeat(5000) });
        case '/big-chunked': {
          res.setHeader('content-type', 'application/json');
          res.write('{"items": [], "padding": "');
          for (let i = 0; i < 10; i++) res.write('x'.repeat(1000));
          return res.end('"}');
        }
        case '/loops':
          return json(res, { items: [], next: 'same' });
        case '/not-array':
          return json(res, { items: { sku: 'x' } });
        default:
          res.statusCode = 404;
          return res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function source(fields: Record<string, unknown>): FeedSource {
  return FEED_BODY.parse({ sourceType: 'json_url', itemIdPath: 'sku', ...fields });
}

async function collect(feed: FeedSource): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  for await (const page of fetchPages(feed, OPEN_NETWORK)) pages.push(page.records);
  return pages;
}

async function failure(feed: FeedSource): Promise<FeedFetchError> {
  try {
    await collect(feed);
  } catch (error) {
    expect(error).toBeInstanceOf(FeedFetchError);
    return error as FeedFetchError;
  }
  throw new Error('the fetch did not fail');
}

function requestsTo(path: string): Seen[] {
  return seen.filter((request) => request.url.pathname === path);
}

describe('feed pagination', () => {
  it('none: one request, the response itself as the records ($)', async () => {
    expect(await collect(source({ url: `${base}/all` }))).toEqual([RECORDS]);
    expect(requestsTo('/all')).toHaveLength(1);
  });

  it('cursor: sends the cursor read at cursorPath until it is empty, and pageSize as the limit', async () => {
    const pages = await collect(
      source({
        url: `${base}/cursor?list=main`,
        itemsPath: '$.data.items',
        pagination: { mode: 'cursor', cursorParam: 'after', cursorPath: '$.meta.next', pageSize: 10 },
      }),
    );
    expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
    expect(pages.flat()).toEqual(RECORDS);
    const urls = requestsTo('/cursor').map((request) => request.url.search);
    expect(urls).toEqual([
      '?list=main&limit=10',
      '?list=main&limit=10&after=10',
      '?list=main&limit=10&after=20',
    ]);
  });

  it('limit_offset: renamed parameters, stopping at a short page', async () => {
    const pages = await collect(
      source({
        url: `${base}/offset`,
        itemsPath: 'results',
        pagination: { mode: 'limit_offset', pageSize: 10, limitParam: 'take', offsetParam: 'skip' },
      }),
    );
    expect(pages.map((page) => page.length)).toEqual([10, 10, 3]);
    expect(requestsTo('/offset').map((request) => request.url.search)).toEqual([
      '?take=10&skip=0',
      '?take=10&skip=10',
      '?take=10&skip=20',
    ]);
  });

  it('limit_offset: a source that ends on a full page is asked once more and ends on the empty one', async () => {
    const pages = await collect(
      source({
        url: `${base}/exact`,
        itemsPath: 'results',
        pagination: { mode: 'limit_offset', pageSize: 10 },
      }),
    );
    expect(pages.map((page) => page.length)).toEqual([10, 10, 0]);
  });

  it('api: the method, headers and body are sent; an indefinite itemsPath gathers every match', async () => {
    const pages = await collect(
      source({
        sourceType: 'api',
        url: `${base}/api`,
        method: 'POST',
        headers: { authorization: 'Bearer secret' },
        body: { catalog: 'all' },
        itemsPath: '$.groups[*].items',
      }),
    );
    expect(pages).toEqual([RECORDS.slice(0, 3)]);
    const [request] = requestsTo('/api');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ catalog: 'all' });
  });
});

describe('feed fetch failures', () => {
  it('names the page and the status of a failing page, without the query string', async () => {
    const error = await failure(
      source({
        url: `${base}/fails-on-page-2?apiKey=topsecret`,
        itemsPath: 'items',
        pagination: { mode: 'cursor', cursorPath: 'next' },
      }),
    );
    expect(error.message).toBe(`page 2 (${base}/fails-on-page-2): the source answered HTTP 500`);
    expect(error.message).not.toContain('topsecret');
  });

  it('refuses malformed JSON', async () => {
    const error = await failure(source({ url: `${base}/malformed`, itemsPath: 'items' }));
    expect(error.message).toMatch(/^page 1 .*: the answer is not valid JSON$/);
  });

  it('times out on slow headers and on a stalled body', async () => {
    for (const path of ['/slow', '/stalls']) {
      const started = Date.now();
      const error = await failure(source({ url: `${base}${path}`, timeoutMs: 300 }));
      expect(error.message).toContain('no complete answer within 300 ms');
      expect(Date.now() - started).toBeLessThan(1400);
    }
  });

  it('refuses answers over maxBytes, announced or not', async () => {
    const announced = await failure(source({ url: `${base}/big`, itemsPath: 'items', maxBytes: 2048 }));
    expect(announced.message).toMatch(/bytes, more than maxBytes \(2048\)/);
    const chunked = await failure(source({ url: `${base}/big-chunked`, itemsPath: 'items', maxBytes: 4096 }));
    expect(chunked.message).toMatch(/longer than maxBytes \(4096 bytes\)/);
  });

  it('stops a cursor that comes back, and an itemsPath that is not an array', async () => {
    const loop = await failure(
      source({
        url: `${base}/loops`,
        itemsPath: 'items',
        pagination: { mode: 'cursor', cursorPath: 'next' },
      }),
    );
    expect(loop.message).toMatch(/^page 2 .*a cursor it gave before/);
    expect((await failure(source({ url: `${base}/not-array`, itemsPath: 'items' }))).message).toMatch(
      /itemsPath items is not an array/,
    );
    expect((await failure(source({ url: `${base}/all`, itemsPath: '$.missing' }))).message).toMatch(
      /matched nothing/,
    );
  });

  it('reports an unreachable source', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await failure(source({ url: `http://127.0.0.1:${port}/feed` }));
    expect(error.message).toMatch(/^page 1 .*ECONNREFUSED/);
  });
});

describe('the network a feed fetches on', () => {
  it('tells private, loopback, link-local and reserved addresses from public ones', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '224.0.0.1',
    ])
      expect(isPrivateAddress(address), address).toBe(true);
    for (const address of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect(isPrivateAddress(address), address).toBe(false);
  });

  it('refuses a private address by default, written as an address or as a name that resolves to one', async () => {
    const guarded = feedNetwork(false);
    const fetched = async (url: string) => {
      try {
        for await (const page of fetchPages(source({ url, itemsPath: '$' }), guarded)) void page;
      } catch (error) {
        return error as Error;
      }
      return undefined;
    };
    const literal = await fetched(`${base}/all`);
    expect(literal).toBeInstanceOf(FeedFetchError);
    expect(literal!.message).toContain('127.0.0.1 is a private address');
    const named = await fetched(`${base.replace('127.0.0.1', 'localhost')}/all`);
    expect(named).toBeInstanceOf(FeedFetchError);
    expect(named!.message).toMatch(/localhost \((127\.0\.0\.1|::1)\) is a private address/);
    expect((await fetched(`${base.replace('127.0.0.1', '[::ffff:7f00:1]')}/all`))!.message).toContain(
      'is a private address',
    );
    // Allowed by the operator, the same source is read.
    const pages: unknown[] = [];
    for await (const page of fetchPages(source({ url: `${base}/all`, itemsPath: '$' }), feedNetwork(true)))
      pages.push(page);
    expect(pages).toHaveLength(1);
  });
});
