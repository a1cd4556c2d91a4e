import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import {
  BIN,
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  signedCall,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { queryStore } from '../support/store-file.js';

/**
 * Catalog feeds against the real daemon and a real source: a node:http server on 127.0.0.1 serving
 * paginated JSON in every mode, and failing in the ways a source fails.
 */

interface Product {
  sku: string;
  title?: unknown;
  price?: unknown;
  dept?: string;
  image?: string;
  tags?: string[];
}

/** Each tenant's source catalog: a test changes it between syncs. */
const catalogs = new Map<string, Product[]>();
/** How the `flaky` route of a catalog fails, when it does. */
const broken = new Map<string, 'fails-on-page-2' | 'malformed' | 'slow'>();
/** Requests the source served, by path. */
const served: { path: string; query: URLSearchParams; method: string; headers: http.IncomingHttpHeaders }[] =
  [];
let source: http.Server;
let sourceUrl: string;
/** The sources these tests serve are on 127.0.0.1, a private address feeds may reach only when allowed. */
const PRIVATE_NETWORKS = { NEXTREC_FEED_PRIVATE_NETWORKS: 'true' };

let daemon: DaemonProcess;

const PAGE = 3;

/** The gates of `gated` sources, by catalog: their pages wait while it is closed (see `hold`). */
const gates = new Map<string, Promise<void>>();

/** Closes the gate of a catalog's `gated` source; the function returned opens it. */
function hold(name: string): () => void {
  let open!: () => void;
  gates.set(name, new Promise<void>((resolve) => (open = resolve)));
  return () => open();
}

function products(prefix: string, count: number): Product[] {
  return Array.from({ length: count }, (_, i) => ({
    sku: `${prefix}-${i}`,
    title: `${prefix} product ${i}`,
    price: String(10 + i),
    dept: i % 2 ? 'shoes' : 'bags',
    image: `https://img.example/${prefix}/${i}.jpg`,
    tags: ['new', `t${i}`],
  }));
}

function send(res: http.ServerResponse, value: unknown): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(value));
}

/** Routes: /<mode>/<catalog>, so each test's feed reads its own catalog. */
function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url!, 'http://source');
  served.push({ path: url.pathname, query: url.searchParams, method: req.method!, headers: req.headers });
  const [, mode, name] = url.pathname.split('/');
  const catalog = catalogs.get(name) ?? [];
  const cursorPage = () => {
    const at = Number(url.searchParams.get('cursor') ?? 0);
    const next = at + PAGE < catalog.length ? String(at + PAGE) : null;
    return { data: { items: catalog.slice(at, at + PAGE) }, paging: { next } };
  };
  switch (mode) {
    case 'none':
      return send(res, { items: catalog });
    case 'cursor':
      return send(res, cursorPage());
    case 'gated':
      // Held while the test holds the catalog: requests overlap a sync however busy the machine.
      return void (gates.get(name) ?? Promise.resolve()).then(() => send(res, cursorPage()));
    case 'stalling':
      // A first page, then no answer at all (until the source closes).
      if (url.searchParams.get('cursor')) return;
      return send(res, cursorPage());
    case 'offset': {
      const skip = Number(url.searchParams.get('skip'));
      const take = Number(url.searchParams.get('take'));
      return send(res, { results: catalog.slice(skip, skip + take) });
    }
    case 'api':
      if (req.method !== 'POST' || req.headers['x-feed-key'] !== 'sesame') {
        res.statusCode = 401;
        return send(res, { error: 'who are you' });
      }
      return send(res, { items: catalog });
    case 'flaky':
      // A cursor source, until the test breaks it.
      switch (broken.get(name)) {
        case 'fails-on-page-2':
          if (!url.searchParams.get('cursor')) return send(res, cursorPage());
          res.statusCode = 500;
          return void res.end('internal error');
        case 'malformed':
          res.setHeader('content-type', 'application/json');
          return void res.end('{"data": {"items": [{"sku": "x"');
        case 'slow':
          return void setTimeout(() => send(res, cursorPage()), 3000);
        default:
          return send(res, cursorPage());
      }
    case 'malformed':
      res.setHeader('content-type', 'application/json');
      return void res.end('{"items": [{"sku": "x"');
    default:
      res.statusCode = 404;
      return void res.end();
  }
}

beforeAll(async () => {
  source = http.createServer(serve);
  await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
  sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}`;
  daemon = await startDaemonProcess({ env: PRIVATE_NETWORKS });
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
  source.closeAllConnections();
  await new Promise<void>((resolve) => source.close(() => resolve()));
});

const MAPPING = [
  { property: 'title', path: 'title', dataType: 'string', target: 'name' },
  { property: 'price', path: 'price', dataType: 'double', target: 'basePrice' },
  { property: 'image', path: 'image', dataType: 'image', target: 'coverImage' },
  { property: 'dept', path: 'dept', dataType: 'enum', target: 'category' },
  { property: 'tags', path: 'tags', dataType: 'enum', target: 'attributes' },
];

function cursorFeed(name: string, extra: Record<string, unknown> = {}) {
  return {
    sourceType: 'json_url',
    url: `${sourceUrl}/cursor/${name}`,
    itemsPath: '$.data.items',
    itemIdPath: 'sku',
    pagination: { mode: 'cursor', cursorPath: '$.paging.next' },
    mappingRules: MAPPING,
    ...extra,
  };
}

/** A tenant of its own for each group of tests, so that their active feeds never meet. */
async function tenant(name: string) {
  const credentials = await createTenant(daemon.url, name);
  const headers = tenantHeaders(credentials);
  const api = (method: string, route: string, body?: unknown) =>
    call(daemon.url, method, route, { headers, body });
  /** Creates, previews and activates a feed; returns its id. */
  const activeFeed = async (body: unknown): Promise<string> => {
    const created = await api('POST', '/catalog/feeds', body);
    expect(created.status).toBe(201);
    expect((await api('POST', `/catalog/feeds/${created.body.id}/preview`)).status).toBe(200);
    expect((await api('POST', `/catalog/feeds/${created.body.id}/activate`)).status).toBe(200);
    return created.body.id as string;
  };
  const items = async (): Promise<Record<string, { available: boolean; feedManaged: boolean } & object>> => {
    const listed = await api('GET', '/catalog/items?limit=1000');
    expect(listed.status).toBe(200);
    return Object.fromEntries(
      listed.body.data.map((item: { externalId: string }) => [item.externalId, item]),
    );
  };
  return { credentials, headers, api, activeFeed, items };
}

function requestsTo(path: string): number {
  return served.filter((request) => request.path === path).length;
}

describe('feed configuration', () => {
  let t: Awaited<ReturnType<typeof tenant>>;
  beforeAll(async () => {
    t = await tenant('config');
  });

  it('creates a draft with its defaults, lists it and reads it', async () => {
    const created = await t.api('POST', '/catalog/feeds', cursorFeed('config'));
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      ...cursorFeed('config'),
      pagination: {
        mode: 'cursor',
        cursorPath: '$.paging.next',
        cursorParam: 'cursor',
        limitParam: 'limit',
        offsetParam: 'offset',
      },
      method: 'GET',
      headers: {},
      scheduleMode: 'manual',
      timeoutMs: 30_000,
      maxBytes: 64 * 1024 * 1024,
      state: 'draft',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      lastSync: null,
    });
    const named = await t.api('POST', '/catalog/feeds', { ...cursorFeed('config'), id: 'main-feed' });
    expect(named.body).toMatchObject({ id: 'main-feed', state: 'draft' });
    expectError(
      await t.api('POST', '/catalog/feeds', { ...cursorFeed('config'), id: 'main-feed' }),
      409,
      'CONFLICT',
    );

    const list = await t.api('GET', '/catalog/feeds');
    expect(list.status).toBe(200);
    expect(list.body.data.map((feed: { id: string }) => feed.id)).toEqual([created.body.id, 'main-feed']);
    expect((await t.api('GET', `/catalog/feeds/${created.body.id}`)).body).toEqual(created.body);
    expectError(await t.api('GET', '/catalog/feeds/nope'), 404, 'NOT_FOUND');
  });

  it('answers 400 INVALID_BODY naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...cursorFeed('config'), sourceType: 'ftp' }, 'sourceType'],
      [{ ...cursorFeed('config'), url: 'not a url' }, 'url'],
      [{ ...cursorFeed('config'), pagination: { mode: 'cursor' } }, 'pagination.cursorPath'],
      [{ ...cursorFeed('config'), itemIdPath: undefined }, 'itemIdPath'],
      [{ ...cursorFeed('config'), scheduleMode: 'cron', cron: '61 * * * *' }, 'cron'],
      [{ ...cursorFeed('config'), scheduleMode: 'interval' }, 'intervalMinutes'],
      [
        { ...cursorFeed('config'), mappingRules: [{ property: 'p', path: 'p', dataType: 'date' }] },
        'mappingRules.0.dataType',
      ],
      [{ ...cursorFeed('config'), extra: true }, ''],
    ];
    for (const [body, path] of cases) {
      const response = await t.api('POST', '/catalog/feeds', body);
      expectError(response, 400, 'INVALID_BODY');
      expect(response.body.details).toContainEqual(expect.objectContaining({ path }));
    }
  });

  it('replaces with PUT (back to draft, GET answers may be sent back), deletes, and keeps feeds per tenant', async () => {
    const id = await t.activeFeed({ ...cursorFeed('config'), id: 'replaced' });
    const current = (await t.api('GET', '/catalog/feeds/replaced')).body;
    expect(current.state).toBe('active');
    const replaced = await t.api('PUT', '/catalog/feeds/replaced', {
      ...current,
      scheduleMode: 'interval',
      intervalMinutes: 5,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ id, state: 'draft', scheduleMode: 'interval', intervalMinutes: 5 });
    expect(replaced.body.createdAt).toBe(current.createdAt);
    // Omitted fields take their defaults; the id may be omitted and must match when sent.
    expect((await t.api('PUT', '/catalog/feeds/replaced', cursorFeed('config'))).body).toMatchObject({
      scheduleMode: 'manual',
    });
    expectError(
      await t.api('PUT', '/catalog/feeds/replaced', { ...cursorFeed('config'), id: 'other' }),
      400,
      'INVALID_BODY',
    );
    expectError(await t.api('PUT', '/catalog/feeds/missing', cursorFeed('config')), 404, 'NOT_FOUND');

    const other = await tenant('config-other');
    expectError(await other.api('GET', '/catalog/feeds/replaced'), 404, 'NOT_FOUND');
    expect((await other.api('GET', '/catalog/feeds')).body).toEqual({ data: [] });
    const asPublic = await signedCall(daemon.url, 'GET', '/catalog/feeds', t.credentials, {
      token: 'public',
    });
    expectError(asPublic, 403, 'FORBIDDEN_SCOPE');

    expect((await t.api('DELETE', '/catalog/feeds/replaced')).status).toBe(204);
    expectError(await t.api('GET', '/catalog/feeds/replaced'), 404, 'NOT_FOUND');
    expectError(await t.api('DELETE', '/catalog/feeds/replaced'), 404, 'NOT_FOUND');
  });
});

describe('feed states', () => {
  it('previews (first page, first 20 items, nothing stored), then activates one feed per tenant', async () => {
    const t = await tenant('states');
    catalogs.set('states', [
      ...products('st', 24),
      { sku: 'bad-price', price: 'cheap' },
      { sku: 'bad-image', image: 'not an url' },
    ]);
    const a = (
      await t.api('POST', '/catalog/feeds', {
        ...cursorFeed('states'),
        url: `${sourceUrl}/none/states`,
        itemsPath: 'items',
        pagination: { mode: 'none' },
      })
    ).body;
    expectError(await t.api('POST', `/catalog/feeds/${a.id}/activate`), 409, 'CONFLICT');
    expectError(await t.api('POST', `/catalog/feeds/${a.id}/sync`), 409, 'CONFLICT');

    const preview = await t.api('POST', `/catalog/feeds/${a.id}/preview`);
    expect(preview.status).toBe(200);
    expect(preview.body.total).toBe(26);
    expect(preview.body.items).toHaveLength(20);
    expect(preview.body.items[1]).toEqual({
      externalId: 'st-1',
      category: 'shoes',
      attributes: {
        name: 'st product 1',
        price: 11,
        image: 'https://img.example/st/1.jpg',
        tags: ['new', 't1'],
      },
    });
    expect(preview.body.errors).toEqual([
      { index: 24, message: expect.stringContaining('price') },
      { index: 25, message: expect.stringContaining('image') },
    ]);
    expect((await t.api('GET', '/catalog/items')).body.total).toBe(0);
    expect((await t.api('GET', `/catalog/feeds/${a.id}`)).body.state).toBe('previewed');

    // A cursor preview reads the first page only.
    const b = (await t.api('POST', '/catalog/feeds', cursorFeed('states'))).body;
    const before = requestsTo('/cursor/states');
    const cursorPreview = await t.api('POST', `/catalog/feeds/${b.id}/preview`);
    expect(cursorPreview.body).toMatchObject({ total: PAGE, errors: [] });
    expect(cursorPreview.body.items.map((item: { externalId: string }) => item.externalId)).toEqual([
      'st-0',
      'st-1',
      'st-2',
    ]);
    expect(requestsTo('/cursor/states') - before).toBe(1);

    const activated = await t.api('POST', `/catalog/feeds/${a.id}/activate`);
    expect(activated.status).toBe(200);
    expect(activated.body).toMatchObject({ id: a.id, state: 'active' });
    expect((await t.api('POST', `/catalog/feeds/${b.id}/activate`)).body.state).toBe('active');
    expect((await t.api('GET', `/catalog/feeds/${a.id}`)).body.state).toBe('disabled');
    expectError(await t.api('POST', `/catalog/feeds/${a.id}/sync`), 409, 'CONFLICT');

    // A disabled feed was previewed: it may be activated again, which disables the other.
    expect((await t.api('POST', `/catalog/feeds/${a.id}/activate`)).body.state).toBe('active');
    const states = (await t.api('GET', '/catalog/feeds')).body.data.map(
      (feed: { state: string }) => feed.state,
    );
    expect(states).toEqual(['active', 'disabled']);
    expect((await t.api('POST', `/catalog/feeds/${a.id}/disable`)).body.state).toBe('disabled');
    const draft = (await t.api('POST', '/catalog/feeds', cursorFeed('states'))).body;
    expectError(await t.api('POST', `/catalog/feeds/${draft.id}/disable`), 409, 'CONFLICT');
    expect((await t.api('POST', `/catalog/feeds/${b.id}/disable`)).body.state).toBe('disabled');
    expect((await t.api('GET', '/catalog/items')).body.total).toBe(0);
  });

  it('answers 502 FEED_FETCH_FAILED for a preview whose source fails, and leaves the draft a draft', async () => {
    const t = await tenant('preview-fail');
    const feed = (
      await t.api('POST', '/catalog/feeds', {
        ...cursorFeed('x'),
        url: `${sourceUrl}/malformed/x`,
        itemsPath: 'items',
        pagination: { mode: 'none' },
      })
    ).body;
    const preview = await t.api('POST', `/catalog/feeds/${feed.id}/preview`);
    expectError(preview, 502, 'FEED_FETCH_FAILED');
    expect(preview.body.message).toContain('not valid JSON');
    expect((await t.api('GET', `/catalog/feeds/${feed.id}`)).body.state).toBe('draft');
  });
});

describe('feed sync', () => {
  it('syncs a cursor source into feed-managed items and reports it as lastSync', async () => {
    const t = await tenant('sync-cursor');
    catalogs.set('sync-cursor', products('c', 10));
    const id = await t.activeFeed(cursorFeed('sync-cursor'));
    const result = await t.api('POST', `/catalog/feeds/${id}/sync`);
    expect(result.status).toBe(200);
    expect(result.body).toEqual({
      upserted: 10,
      markedUnavailable: 0,
      errors: [],
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
    });
    expect(Date.parse(result.body.finishedAt)).toBeGreaterThanOrEqual(Date.parse(result.body.startedAt));
    // Four pages of three: the last has one record and no cursor.
    expect(served.filter((r) => r.path === '/cursor/sync-cursor').map((r) => r.query.get('cursor'))).toEqual([
      null,
      null,
      '3',
      '6',
      '9',
    ]);
    const stored = (await t.api('GET', '/catalog/items/c-3')).body;
    expect(stored).toMatchObject({
      externalId: 'c-3',
      category: 'shoes',
      attributes: {
        name: 'c product 3',
        price: 13,
        image: 'https://img.example/c/3.jpg',
        tags: ['new', 't3'],
      },
      available: true,
      feedManaged: true,
    });
    const feed = (await t.api('GET', `/catalog/feeds/${id}`)).body;
    expect(feed.state).toBe('active');
    expect(feed.lastSync).toEqual({ status: 'succeeded', ...result.body });
  });

  it('syncs limit_offset with renamed parameters, an api source with method and headers, and none', async () => {
    const t = await tenant('sync-modes');
    catalogs.set('modes', products('m', 7));
    const offset = await t.activeFeed({
      ...cursorFeed('modes'),
      url: `${sourceUrl}/offset/modes`,
      itemsPath: 'results',
      pagination: { mode: 'limit_offset', pageSize: 3, limitParam: 'take', offsetParam: 'skip' },
    });
    expect((await t.api('POST', `/catalog/feeds/${offset}/sync`)).body).toMatchObject({ upserted: 7 });
    const offsets = served
      .filter((r) => r.path === '/offset/modes')
      .map((r) => `${r.query.get('take')}/${r.query.get('skip')}`);
    expect(offsets.slice(-3)).toEqual(['3/0', '3/3', '3/6']);

    catalogs.set('modes', products('m', 8));
    const api = await t.activeFeed({
      ...cursorFeed('modes'),
      sourceType: 'api',
      url: `${sourceUrl}/api/modes`,
      method: 'POST',
      headers: { 'x-feed-key': 'sesame' },
      body: { all: true },
      itemsPath: 'items',
      pagination: { mode: 'none' },
    });
    expect((await t.api('GET', `/catalog/feeds/${offset}`)).body.state).toBe('disabled');
    expect((await t.api('POST', `/catalog/feeds/${api}/sync`)).body).toMatchObject({
      upserted: 8,
      markedUnavailable: 0,
    });
    expect((await t.items())['m-7']).toMatchObject({ available: true, feedManaged: true });

    // Without its key the api source answers 401.
    const config = (await t.api('GET', `/catalog/feeds/${api}`)).body;
    expect((await t.api('PUT', `/catalog/feeds/${api}`, { ...config, headers: {} })).status).toBe(200);
    await t
      .api('POST', `/catalog/feeds/${api}/preview`)
      .then((r) => expectError(r, 502, 'FEED_FETCH_FAILED'));
    catalogs.set('modes', products('m', 2));
    const none = await t.activeFeed({
      ...cursorFeed('modes'),
      url: `${sourceUrl}/none/modes`,
      itemsPath: '$.items',
      pagination: { mode: 'none' },
    });
    expect((await t.api('POST', `/catalog/feeds/${none}/sync`)).body).toMatchObject({
      upserted: 2,
      markedUnavailable: 6,
    });
  });

  it('marks feed-managed items the source dropped unavailable, never touches others, and brings items back', async () => {
    const t = await tenant('sync-semantics');
    const manual = [
      { externalId: 'manual-1', category: 'hats', attributes: { name: 'Hat' } },
      { externalId: 'manual-2', attributes: { colour: 'red' } },
    ];
    expect((await t.api('POST', '/ingestion/items', { items: manual })).status).toBe(200);
    catalogs.set('semantics', products('s', 6));
    const id = await t.activeFeed(cursorFeed('semantics'));
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 6,
      markedUnavailable: 0,
    });
    const manualBefore = (await t.items())['manual-1'];

    // s-1 and s-4 leave the source; s-2 changes and loses its title.
    catalogs.set(
      'semantics',
      products('s', 6)
        .filter((p) => p.sku !== 's-1' && p.sku !== 's-4')
        .map((p) => (p.sku === 's-2' ? { ...p, title: undefined, price: 99 } : p)),
    );
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 4,
      markedUnavailable: 2,
    });
    let items = await t.items();
    expect(items['s-1']).toMatchObject({
      available: false,
      feedManaged: true,
      attributes: { name: 's product 1' },
    });
    expect(items['s-4']).toMatchObject({ available: false });
    expect(items['s-2']).toMatchObject({ available: true, attributes: { price: 99 } });
    expect(items['s-2']).not.toHaveProperty('attributes.name');
    expect(items['manual-1']).toEqual(manualBefore);
    expect(items['manual-2']).toMatchObject({ available: true, feedManaged: false });

    // Unavailable items are out of recommendations at once.
    const popular = async () => {
      const answer = await t.api('POST', '/recommendations', {
        logicType: 'user-to-item',
        userId: 'nobody',
        count: 20,
      });
      expect(answer.status).toBe(200);
      return answer.body.items.map((item: { itemId: string }) => item.itemId) as string[];
    };
    const listed = await popular();
    expect(listed).toContain('s-0');
    expect(listed).not.toContain('s-1');

    // s-1 comes back.
    catalogs.set(
      'semantics',
      products('s', 6).filter((p) => p.sku !== 's-4'),
    );
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 5,
      markedUnavailable: 0,
    });
    items = await t.items();
    expect(items['s-1']).toMatchObject({ available: true, feedManaged: true });
    expect(items['s-4']).toMatchObject({ available: false });
    expect(await popular()).toContain('s-1');

    // A source that lists nothing: every feed-managed item becomes unavailable, the others stay.
    catalogs.set('semantics', []);
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 0,
      markedUnavailable: 5,
    });
    items = await t.items();
    expect(Object.values(items).filter((item) => item.feedManaged && item.available)).toEqual([]);
    expect(items['manual-1']).toEqual(manualBefore);
    expect(items['manual-2']).toMatchObject({ available: true });
    expect(await popular()).toEqual(expect.not.arrayContaining(['s-0', 's-1', 's-2']));
  });

  it('reports records it could not map and leaves their items as they were', async () => {
    const t = await tenant('sync-errors');
    catalogs.set('errors', products('e', 4));
    const id = await t.activeFeed(cursorFeed('errors'));
    await t.api('POST', `/catalog/feeds/${id}/sync`);
    catalogs.set('errors', [
      ...products('e', 4).map((p) => (p.sku === 'e-1' ? { ...p, price: 'free', title: 'renamed' } : p)),
      { title: 'no sku' } as Product,
    ]);
    const result = await t.api('POST', `/catalog/feeds/${id}/sync`);
    expect(result.body).toMatchObject({
      upserted: 3,
      markedUnavailable: 0,
      errors: [
        { index: 1, message: expect.stringMatching(/^price \(price\): expected a number/) },
        { index: 4, message: 'no id at itemIdPath' },
      ],
    });
    expect((await t.api('GET', '/catalog/items/e-1')).body).toMatchObject({
      available: true,
      attributes: { name: 'e product 1', price: 11 },
    });
    expect((await t.api('GET', '/catalog/items')).body.total).toBe(4);

    // An id listed twice is one item, as its last record says; the first record, once unmappable, is
    // now listed validly, and e-3 is listed only by a record that fails, so it stays as it was.
    catalogs.set('errors', [
      ...products('e', 3),
      { ...products('e', 4)[3], price: 'not a price' },
      { sku: 'e-0', title: 'first again', price: 1 },
    ]);
    expect((await t.api('POST', `/catalog/feeds/${id}/sync`)).body).toMatchObject({
      upserted: 3,
      markedUnavailable: 0,
      errors: [{ index: 3 }],
    });
    expect((await t.api('GET', '/catalog/items/e-0')).body).toMatchObject({
      attributes: { name: 'first again', price: 1 },
      available: true,
    });
    expect((await t.api('GET', '/catalog/items/e-1')).body).toMatchObject({
      attributes: { name: 'e product 1', price: 11 },
    });
    expect((await t.api('GET', '/catalog/items/e-3')).body).toMatchObject({
      attributes: { name: 'e product 3', price: 13 },
      available: true,
    });
  });

  it('changes nothing when a page fails, the JSON is malformed, or the source is too slow', async () => {
    const t = await tenant('sync-failures');
    catalogs.set('failures', products('f', 8));
    const good = await t.activeFeed(cursorFeed('failures'));
    await t.api('POST', `/catalog/feeds/${good}/sync`);
    const before = (await t.api('GET', '/catalog/items?limit=100')).body;
    catalogs.set('failures', products('g', 8));

    const flaky = await t.activeFeed(
      cursorFeed('failures', { url: `${sourceUrl}/flaky/failures?token=hush`, timeoutMs: 500 }),
    );
    const failures = [
      [
        'fails-on-page-2',
        /page 2 \(http:\/\/127\.0\.0\.1:\d+\/flaky\/failures\): the source answered HTTP 500/,
      ],
      ['malformed', /page 1 .*: the answer is not valid JSON/],
      ['slow', /page 1 .*: no complete answer within 500 ms/],
    ] as const;
    for (const [how, message] of failures) {
      broken.set('failures', how);
      const started = Date.now();
      const sync = await t.api('POST', `/catalog/feeds/${flaky}/sync`);
      expectError(sync, 502, 'FEED_FETCH_FAILED');
      expect(sync.body.message).toMatch(message);
      expect(sync.body.message).toMatch(new RegExp(`^feed '${flaky}': .*; nothing changed$`));
      expect(sync.body.message).not.toContain('hush');
      expect(Date.now() - started).toBeLessThan(2500);
      expect((await t.api('GET', '/catalog/items?limit=100')).body).toEqual(before);
      const feed = (await t.api('GET', `/catalog/feeds/${flaky}`)).body;
      expect(feed.state).toBe('active');
      expect(feed.lastSync).toEqual({
        status: 'failed',
        message: expect.stringMatching(message),
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
      });
    }
    broken.delete('failures');
    // The good feed again: the new catalog replaces the old one.
    await t.api('POST', `/catalog/feeds/${good}/activate`);
    expect((await t.api('POST', `/catalog/feeds/${good}/sync`)).body).toMatchObject({
      upserted: 8,
      markedUnavailable: 8,
    });
  });

  it('runs one sync for concurrent requests, and refuses changes to a syncing feed', async () => {
    const t = await tenant('sync-concurrent');
    catalogs.set('concurrent', products('k', 12));
    const id = await t.activeFeed({
      ...cursorFeed('concurrent'),
      url: `${sourceUrl}/gated/concurrent`,
    });
    const before = requestsTo('/gated/concurrent');
    // The sync waits for its first page until the gate opens, below.
    const open = hold('concurrent');
    const first = t.api('POST', `/catalog/feeds/${id}/sync`);
    await eventually(async () =>
      expect((await t.api('GET', `/catalog/feeds/${id}`)).body.state).toBe('syncing'),
    );
    const operator = { 'x-api-key': OPERATOR_KEY };
    const route = '/tenants/sync-concurrent/feeds/sync';
    const others = [
      t.api('POST', `/catalog/feeds/${id}/sync`),
      t.api('POST', `/catalog/feeds/${id}/sync`),
      call(daemon.url, 'POST', route, { headers: operator }),
    ];
    const status = await call(daemon.url, 'GET', route, { headers: operator });
    expect(status.body).toEqual({
      feedId: id,
      state: 'syncing',
      progress: { pages: expect.any(Number), records: expect.any(Number) },
    });
    expectError(await call(daemon.url, 'GET', route, { headers: t.headers }), 403, 'FORBIDDEN_SCOPE');
    expectError(await t.api('DELETE', `/catalog/feeds/${id}`), 409, 'CONFLICT');
    expectError(await t.api('PUT', `/catalog/feeds/${id}`, cursorFeed('concurrent')), 409, 'CONFLICT');
    open();
    const results = await Promise.all([first, ...others]);
    for (const result of results) {
      expect(result.status).toBe(200);
      expect(result.body).toEqual(results[0].body);
    }
    expect(results[0].body.upserted).toBe(12);
    expect(requestsTo('/gated/concurrent') - before).toBe(4);
    expect((await t.api('GET', `/catalog/feeds/${id}`)).body.state).toBe('active');
    expect((await call(daemon.url, 'GET', route, { headers: operator })).body).toEqual({
      feedId: id,
      state: 'active',
      progress: null,
    });
  });

  it('syncs on a cron schedule by itself, and stops once the feed is disabled', async () => {
    const t = await tenant('sync-cron');
    catalogs.set('cron', products('r', 5));
    const id = await t.activeFeed(cursorFeed('cron', { scheduleMode: 'cron', cron: '* * * * * *' }));
    await eventually(async () => {
      const feed = (await t.api('GET', `/catalog/feeds/${id}`)).body;
      expect(feed.lastSync).toMatchObject({ status: 'succeeded', upserted: 5 });
    });
    expect((await t.api('GET', '/catalog/items/r-4')).body).toMatchObject({
      feedManaged: true,
      available: true,
    });
    catalogs.set('cron', products('r', 6));
    await eventually(async () => expect((await t.api('GET', '/catalog/items/r-5')).status).toBe(200));

    // A feed that syncs is not disabled (409): asked again until no sync runs.
    await eventually(async () =>
      expect((await t.api('POST', `/catalog/feeds/${id}/disable`)).status).toBe(200),
    );
    // Disabled, and no sync runs: the schedule, due every second, reads nothing more.
    const after = requestsTo('/cursor/cron');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(requestsTo('/cursor/cron')).toBe(after);
  });
});

describe('a daemon that keeps feeds to public addresses (the default)', () => {
  it('answers 502 FEED_FETCH_FAILED for a source on a private address, saying how to allow it', async () => {
    const own = await startDaemonProcess();
    try {
      const credentials = await createTenant(own.url, 'guarded');
      const headers = tenantHeaders(credentials);
      const created = await call(own.url, 'POST', '/catalog/feeds', {
        headers,
        body: {
          sourceType: 'json_url',
          url: `${sourceUrl}/none/guarded`,
          itemsPath: '$.items',
          itemIdPath: 'sku',
        },
      });
      expect(created.status).toBe(201);
      const preview = await call(own.url, 'POST', `/catalog/feeds/${created.body.id}/preview`, { headers });
      expectError(preview, 502, 'FEED_FETCH_FAILED');
      expect(preview.body.message).toContain('127.0.0.1 is a private address');
      expect(preview.body.message).toContain('--feed-private-networks');
    } finally {
      await own.stop();
      removeDataDir(own.dataDir);
    }
  });
});

describe('nextrec feed sync', () => {
  const run = promisify(execFile);
  const nextrec = (args: string[], dataDir: string) =>
    run(process.execPath, [BIN, ...args, '--data-dir', dataDir], {
      env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY, ...PRIVATE_NETWORKS },
    });

  it("syncs the tenant's active feed through a running daemon, and on the store when none runs", async () => {
    const own = await startDaemonProcess({ env: PRIVATE_NETWORKS });
    try {
      const credentials: TenantCredentials = await createTenant(own.url, 'cli');
      const headers = tenantHeaders(credentials);
      const api = (method: string, route: string, body?: unknown) =>
        call(own.url, method, route, { headers, body });
      await expect(nextrec(['feed', 'sync', '--tenant', 'cli'], own.dataDir)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining("tenant 'cli' has no active feed"),
      });
      catalogs.set('cli', products('cli', 7));
      const id = (await api('POST', '/catalog/feeds', cursorFeed('cli'))).body.id;
      await api('POST', `/catalog/feeds/${id}/preview`);
      await api('POST', `/catalog/feeds/${id}/activate`);

      const through = await nextrec(['feed', 'sync', '--tenant', 'cli'], own.dataDir);
      expect(JSON.parse(through.stdout)).toMatchObject({ upserted: 7, markedUnavailable: 0, errors: [] });
      expect((await api('GET', '/catalog/items')).body.total).toBe(7);
      expect((await api('GET', `/catalog/feeds/${id}`)).body.lastSync).toMatchObject({ upserted: 7 });
    } finally {
      expect(await own.stop()).toBe(0);
    }
    try {
      catalogs.set('cli', products('cli', 4));
      const direct = await nextrec(['feed', 'sync', '--tenant', 'cli'], own.dataDir);
      expect(JSON.parse(direct.stdout)).toMatchObject({ upserted: 4, markedUnavailable: 3 });
      const rows = await queryStore(
        own.dataDir,
        "SELECT external_id, available, feed_managed FROM items WHERE tenant_id = 'cli' ORDER BY external_id",
      );
      expect(rows.map((row) => [row.external_id, row.available])).toEqual([
        ['cli-0', true],
        ['cli-1', true],
        ['cli-2', true],
        ['cli-3', true],
        ['cli-4', false],
        ['cli-5', false],
        ['cli-6', false],
      ]);
      const feeds = await queryStore(own.dataDir, "SELECT doc FROM config_documents WHERE kind = 'feed'");
      expect(JSON.parse(String(feeds[0].doc))).toMatchObject({ state: 'active', lastSync: { upserted: 4 } });
      await expect(nextrec(['feed', 'sync', '--tenant', 'nobody'], own.dataDir)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining("tenant 'nobody' does not exist"),
      });
    } finally {
      removeDataDir(own.dataDir);
    }
  });

  it('stops a running sync when the daemon stops: the sync changes nothing and the daemon exits 0', async () => {
    const own = await startDaemonProcess({ env: PRIVATE_NETWORKS });
    try {
      const headers = tenantHeaders(await createTenant(own.url, 'stopping'));
      const api = (method: string, route: string, body?: unknown) =>
        call(own.url, method, route, { headers, body });
      catalogs.set('stopping', products('st', 9));
      const id = (
        await api('POST', '/catalog/feeds', cursorFeed('stopping', { url: `${sourceUrl}/stalling/stopping` }))
      ).body.id;
      await api('POST', `/catalog/feeds/${id}/preview`);
      await api('POST', `/catalog/feeds/${id}/activate`);
      // The source answers the first page and never the second: the sync runs until the daemon stops it
      // (a sync that waited for the page would fail by its 30 s timeout instead).
      const sync = api('POST', `/catalog/feeds/${id}/sync`);
      await eventually(async () =>
        expect((await api('GET', `/catalog/feeds/${id}`)).body.state).toBe('syncing'),
      );
      const code = own.stop();
      const answer = await sync;
      expectError(answer, 502, 'FEED_FETCH_FAILED');
      expect(answer.body.message).toContain('the sync was stopped');
      expect(await code).toBe(0);
      expect(
        await queryStore(own.dataDir, "SELECT count(*) AS n FROM items WHERE tenant_id = 'stopping'"),
      ).toEqual([{ n: 0n }]);
      const [stored] = await queryStore(own.dataDir, "SELECT doc FROM config_documents WHERE kind = 'feed'");
      expect(JSON.parse(String(stored.doc))).toMatchObject({
        state: 'active',
        lastSync: { status: 'failed', message: expect.stringContaining('the sync was stopped') },
      });
    } finally {
      await own.stop();
      removeDataDir(own.dataDir);
    }
  });
});
