import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  tenantHeaders,
  type DaemonProcess,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';
import { daemonReady, vectorsIndexed } from '../support/models.js';
import { makeTinyModel } from '../../fixtures/tiny-model/make-tiny-model.js';

/** Four families of three products whose names share words within a family and none across. */
const FAMILIES = {
  coffee: [
    'espresso machine with milk frother',
    'compact espresso machine',
    'espresso machine grinder bundle',
  ],
  shoes: ['trail running shoes', 'lightweight running shoes', 'waterproof trail running shoes'],
  socks: ['merino wool socks', 'wool hiking socks', 'thick wool winter socks'],
  garden: ['expandable garden hose', 'garden hose reel', 'heavy duty garden hose nozzle'],
} as const;

const ITEMS = Object.entries(FAMILIES).flatMap(([category, names], f) =>
  names.map((name, i) => ({
    externalId: `${category}-${i}`,
    category,
    attributes: { name, price: 10 + f * 40 + i * 5, brand: i === 0 ? 'acme' : 'other' },
  })),
);

let daemon: DaemonProcess;
let tenant: TenantCredentials;
let headers: Record<string, string>;
let embeddingsUrl: string;

async function similar(itemId: string, query = ''): Promise<string[]> {
  const response = await call(
    daemon.url,
    'GET',
    `/recommendations/similar-products/${itemId}?count=2${query}`,
    {
      headers,
    },
  );
  expect(response.status).toBe(200);
  return response.body.items.map((item: { itemId: string }) => item.itemId);
}

async function search(query: string, extra = '') {
  return call(daemon.url, 'GET', `/recommendations/search?query=${encodeURIComponent(query)}${extra}`, {
    headers,
  });
}

async function start(dataDir?: string): Promise<void> {
  daemon = await startDaemonProcess({ dataDir });
  embeddingsUrl = /embeddings helper listening on (http:\/\/\S+)/.exec(daemon.output())![1];
}

beforeAll(async () => {
  await start(tempDataDir());
  tenant = await createTenant(daemon.url, 'vec');
  headers = tenantHeaders(tenant);
  const upserted = await call(daemon.url, 'POST', '/ingestion/items', { headers, body: { items: ITEMS } });
  expect(upserted.status).toBe(200);
  // Indexing is asynchronous: wait until the last item has its neighbours.
  await eventually(async () => expect(await similar('garden-2')).toHaveLength(2));
});

afterAll(async () => {
  await daemon?.stop();
  removeDataDir(daemon.dataDir);
});

describe('similar-products', () => {
  it.each(ITEMS.map((item) => item.externalId))('%s: its family first', async (itemId) => {
    const family = itemId.split('-')[0];
    const neighbours = await similar(itemId);
    expect(neighbours.every((id) => id.startsWith(`${family}-`) && id !== itemId)).toBe(true);
  });

  it('is vector similarity by default, and listed', async () => {
    const response = await call(daemon.url, 'GET', '/recommendations/similar-products/coffee-0', { headers });
    expect(response.body.algorithm).toBe('vector-similarity');
    const listing = await call(daemon.url, 'GET', '/recommendations/algorithms/similar-products', {
      headers,
    });
    expect(listing.body.data).toContainEqual(
      expect.objectContaining({ name: 'vector-similarity', isDefault: { 'similar-products': true } }),
    );
    const multi = await call(daemon.url, 'GET', '/recommendations/algorithms/items-to-items', { headers });
    expect(multi.body.data.map((a: { name: string }) => a.name)).toContain('multi-seed-hybrid');
  });

  it('follows vectorSettings: filter_categories and score_threshold', async () => {
    const scenario = await call(daemon.url, 'POST', '/scenarios', {
      headers,
      body: {
        slug: 'similar-socks-only',
        logicType: 'similar-products',
        vectorSettings: { filter_categories: ['socks'], hnsw_ef: 32, quantization: 'i8' },
      },
    });
    expect(scenario.status).toBe(201);
    const response = await call(
      daemon.url,
      'GET',
      '/recommendations/similar-products/socks-0?scenario=similar-socks-only&count=5',
      {
        headers,
      },
    );
    const ids = response.body.items.map((item: { itemId: string }) => item.itemId);
    // The two other socks from vectors; popularity fills the rest below them.
    expect(ids.slice(0, 2).sort()).toEqual(['socks-1', 'socks-2']);
    const strict = await call(daemon.url, 'POST', '/scenarios', {
      headers,
      body: {
        slug: 'similar-strict',
        logicType: 'similar-products',
        vectorSettings: { score_threshold: 0.99 },
      },
    });
    expect(strict.status).toBe(201);
    // Search has no popularity fill: nothing is that similar, so nothing comes back.
    const none = await search('wool socks', '&scenario=similar-strict');
    expect(none.body.items).toEqual([]);
    const loose = await search('wool socks');
    expect(loose.body.items.length).toBeGreaterThan(0);
    const bad = await call(daemon.url, 'POST', '/scenarios', {
      headers,
      body: { slug: 'bad-vectors', logicType: 'similar-products', vectorSettings: { hnsw_ef: 0 } },
    });
    expectError(bad, 400, 'INVALID_BODY');
  });

  it('multi-seed-hybrid fuses co-occurrence and vector neighbours of several seeds', async () => {
    const scenario = await call(daemon.url, 'POST', '/scenarios', {
      headers,
      body: {
        slug: 'hybrid',
        logicType: 'items-to-items',
        algorithm: 'multi-seed-hybrid',
        hybridSettings: { strategy: 'rrf', rrfK: 10, vectorTopK: 20, coTopK: 20, categoryBoost: 0.5 },
      },
    });
    expect(scenario.status).toBe(201);
    const response = await call(daemon.url, 'POST', '/recommendations', {
      headers,
      body: { scenario: 'hybrid', itemIds: ['coffee-0', 'shoes-0'], count: 4 },
    });
    expect(response.status).toBe(200);
    expect(response.body.algorithm).toBe('multi-seed-hybrid');
    const ids: string[] = response.body.items.map((item: { itemId: string }) => item.itemId);
    expect(ids.sort()).toEqual(['coffee-1', 'coffee-2', 'shoes-1', 'shoes-2']);
  });
});

describe('embedding templates', () => {
  it('are a configuration resource whose changes re-embed the items', async () => {
    const template = { slug: 'by-brand', template: '{brand} {brand} product', appliesTo: ['garden'] };
    const created = await call(daemon.url, 'POST', '/catalog/embedding-templates', {
      headers,
      body: template,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ ...template, isDefault: false });
    expectError(
      await call(daemon.url, 'POST', '/catalog/embedding-templates', { headers, body: template }),
      409,
      'CONFLICT',
    );
    const listed = await call(daemon.url, 'GET', '/catalog/embedding-templates', { headers });
    expect(listed.body.data.map((t: { slug: string }) => t.slug)).toEqual(['by-brand']);
    // With a template and no default one, only garden items are embedded: others leave vector search,
    // and garden items now resemble by brand (garden-1 and garden-2 are both 'other').
    await eventually(async () => {
      const neighbours = await similar('garden-1');
      expect(neighbours[0]).toBe('garden-2');
      // Not embedded any more: nothing answers a search for them.
      expect((await search('espresso machine')).body.items).toEqual([]);
    });
    const replaced = await call(daemon.url, 'PUT', '/catalog/embedding-templates/by-brand', {
      headers,
      body: { template: '{name}', isDefault: true },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      slug: 'by-brand',
      template: '{name}',
      isDefault: true,
      appliesTo: [],
    });
    await eventually(async () =>
      expect((await similar('coffee-0')).every((id) => id.startsWith('coffee-'))).toBe(true),
    );
    expect(
      (await call(daemon.url, 'DELETE', '/catalog/embedding-templates/by-brand', { headers })).status,
    ).toBe(204);
    expectError(
      await call(daemon.url, 'GET', '/catalog/embedding-templates/by-brand', { headers }),
      404,
      'NOT_FOUND',
    );
  });

  it('vector defaults are stored per tenant and validated', async () => {
    const put = await call(daemon.url, 'PUT', '/catalog/vector-defaults', {
      headers,
      body: { hnsw_ef: 100, score_threshold: 0.1, quantization: 'f16' },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ hnsw_ef: 100, score_threshold: 0.1, quantization: 'f16' });
    expect((await call(daemon.url, 'GET', '/catalog/vector-defaults', { headers })).body).toEqual(put.body);
    expectError(
      await call(daemon.url, 'PUT', '/catalog/vector-defaults', { headers, body: { quantization: 'f8' } }),
      400,
      'INVALID_BODY',
    );
    const reset = await call(daemon.url, 'PUT', '/catalog/vector-defaults', { headers, body: {} });
    expect(reset.body).toEqual({});
  });
});

describe('hybrid search', () => {
  it('splits the text into a semantic part and a filter, and answers items, facets and query', async () => {
    const response = await search('running shoes under $20', '&count=5');
    expect(response.status).toBe(200);
    expect(response.body.query).toEqual({
      original: 'running shoes under $20',
      semanticText: 'running shoes',
      extractedFilters: "'category' in {\"shoes\"} and 'price' < 20",
    });
    // Shoes cost 50, 55, 60: none is under 20.
    expect(response.body.items).toEqual([]);
    const cheap = await search('running shoes under 58');
    expect(cheap.body.items.map((item: { itemId: string }) => item.itemId).sort()).toEqual([
      'shoes-0',
      'shoes-1',
    ]);
    expect(cheap.body.facets.categories).toEqual([{ value: 'shoes', count: 2 }]);
    expect(
      cheap.body.facets.priceRanges.reduce((sum: number, r: { count: number }) => sum + r.count, 0),
    ).toBe(2);
    for (const range of cheap.body.facets.priceRanges)
      expect(range.value).toMatch(/^(under \d+|\d+ to \d+|\d+ and over)$/);
  });

  it('ranks by similarity, applies projection and scenario filters, and searches a filter-only text', async () => {
    const wool = await search('warm wool socks', '&count=3&includedProperties=attributes.name');
    expect(wool.body.items.map((item: { itemId: string }) => item.itemId).sort()).toEqual([
      'socks-0',
      'socks-1',
      'socks-2',
    ]);
    expect(Object.keys(wool.body.items[0]).sort()).toEqual(['attributes', 'itemId', 'score']);
    expect(wool.body.query.extractedFilters).toBe('\'category\' in {"socks"}');
    const nothingExtracted = await search('warm merino');
    expect(nothingExtracted.body.query.extractedFilters).toBeNull();
    expect(nothingExtracted.body.items[0].itemId).toBe('socks-0');
    const scenario = await call(daemon.url, 'POST', '/scenarios', {
      headers,
      body: { slug: 'search-acme', logicType: 'similar-products', filter: '\'brand\' = "acme"' },
    });
    expect(scenario.status).toBe(201);
    const acme = await search('wool socks', '&scenario=search-acme');
    expect(acme.body.items.map((item: { itemId: string }) => item.itemId)).toEqual(['socks-0']);
    const priceOnly = await search('over 120');
    expect(priceOnly.body.query.semanticText).toBe('');
    expect(priceOnly.body.items.map((item: { itemId: string }) => item.itemId).sort()).toEqual([
      'garden-0',
      'garden-1',
      'garden-2',
    ]);
  });

  it('expands a query with the search synonyms the tenant keeps', async () => {
    const synonyms = (method: 'GET' | 'POST' | 'DELETE', route = '', body?: unknown) =>
      call(daemon.url, method, `/search/synonyms${route}`, { headers, body });
    const names = async (text: string) =>
      (await search(text, '&count=3')).body.items.map((item: { itemId: string }) => item.itemId);
    // Nothing in the catalog is called a barista's anything: similarity alone does not find the coffee family.
    expect((await names('barista')).sort()).not.toEqual(['coffee-0', 'coffee-1', 'coffee-2']);
    const twoWay = await synonyms('POST', '', { term: 'barista', synonym: 'Espresso Machine' });
    expect(twoWay.status).toBe(201);
    expect(twoWay.body).toEqual({
      id: expect.stringMatching(/^[\w-]{16}$/),
      term: 'barista',
      synonym: 'Espresso Machine',
      oneWay: false,
    });
    const barista = await search('barista', '&count=3');
    expect(barista.body.query.semanticText).toBe('barista espresso machine');
    expect(barista.body.items.map((item: { itemId: string }) => item.itemId).sort()).toEqual([
      'coffee-0',
      'coffee-1',
      'coffee-2',
    ]);
    // Two-way: the synonym brings the term.
    expect((await search('espresso machine')).body.query.semanticText).toBe('espresso machine barista');
    // The same pair again, either way round, is the same synonym.
    expectError(
      await synonyms('POST', '', { term: 'espresso machine', synonym: 'BARISTA' }),
      409,
      'CONFLICT',
    );
    const oneWay = await synonyms('POST', '', { term: 'sneakers', synonym: 'trail running', oneWay: true });
    expect(oneWay.status).toBe(201);
    expect((await names('sneakers'))[0]).toMatch(/^shoes-/);
    expect((await search('trail running')).body.query.semanticText).toBe('trail running');
    expect((await synonyms('GET')).body).toEqual({
      data: expect.arrayContaining([twoWay.body, oneWay.body]),
    });
    expect((await synonyms('GET')).body.data).toHaveLength(2);
    expectError(await synonyms('POST', '', { term: 'sofa', synonym: 'Sofa' }), 400, 'INVALID_BODY');
    expectError(await synonyms('POST', '', { term: 'sofa' }), 400, 'INVALID_BODY');

    expect((await synonyms('DELETE', `/${twoWay.body.id}`)).status).toBe(204);
    expectError(await synonyms('DELETE', `/${twoWay.body.id}`), 404, 'NOT_FOUND');
    expect((await search('barista')).body.query.semanticText).toBe('barista');
    // The public token may search but not change synonyms.
    const publicCall = await call(daemon.url, 'GET', '/search/synonyms', {
      headers: { 'x-tenant-id': tenant.tenantId },
    });
    expectError(publicCall, 401, 'UNAUTHORIZED');
    expect((await synonyms('DELETE', `/${oneWay.body.id}`)).status).toBe(204);
  });

  it('needs a query, and the browser credentials may call it', async () => {
    expectError(
      await call(daemon.url, 'GET', '/recommendations/search?count=3', { headers }),
      400,
      'INVALID_QUERY',
    );
    expectError(await search('socks', '&count=0'), 400, 'INVALID_QUERY');
    const unauthenticated = await call(daemon.url, 'GET', '/recommendations/search?query=socks', {
      headers: { 'x-tenant-id': tenant.tenantId },
    });
    expectError(unauthenticated, 401, 'UNAUTHORIZED');
  });
});

describe('the embeddings helper service', () => {
  it('answers health without credentials and indexes items for the tenant its API key names', async () => {
    const health = await call(embeddingsUrl, 'GET', '/health');
    expect(health.body).toEqual({ status: 'ok', model: 'hashing-v1', collection: 'items' });
    const body = {
      tenantId: tenant.tenantId,
      items: [{ externalId: 'kettle-1', category: 'kitchen', attributes: { name: 'steel kettle' } }],
    };
    const named = { 'x-tenant-id': tenant.tenantId };
    // As every route: the tenant header first, then the credential, then the body.
    expectError(await call(embeddingsUrl, 'POST', '/index', { body }), 400, 'TENANT_REQUIRED');
    expectError(
      await call(embeddingsUrl, 'POST', '/index', { headers: { 'x-api-key': tenant.apiKey }, body }),
      400,
      'TENANT_REQUIRED',
    );
    expectError(await call(embeddingsUrl, 'POST', '/index', { headers: named, body }), 401, 'UNAUTHORIZED');
    expectError(
      await call(embeddingsUrl, 'POST', '/index', { headers: { ...named, 'x-api-key': 'nope' }, body: {} }),
      401,
      'UNAUTHORIZED',
    );
    const other = await createTenant(daemon.url, 'vec-other');
    expectError(
      await call(embeddingsUrl, 'POST', '/index', { headers: { ...named, 'x-api-key': other.apiKey }, body }),
      403,
      'FORBIDDEN_TENANT',
    );
    expectError(
      await call(embeddingsUrl, 'POST', '/index', {
        headers: { 'x-tenant-id': 'vec-other', 'x-api-key': tenant.apiKey },
        body,
      }),
      403,
      'FORBIDDEN_TENANT',
    );
    const indexed = await call(embeddingsUrl, 'POST', '/index', {
      headers: { ...named, 'x-api-key': tenant.apiKey },
      body,
    });
    expect(indexed.status).toBe(200);
    expect(indexed.body).toEqual({ indexed: 1 });
    const byOperator = await call(embeddingsUrl, 'POST', '/index', {
      headers: { ...named, 'x-api-key': OPERATOR_KEY },
      body: { ...body, items: [] },
    });
    expect(byOperator.body).toEqual({ indexed: 0 });
    expectError(
      await call(embeddingsUrl, 'POST', '/index', {
        headers: { 'x-tenant-id': 'no-such-tenant', 'x-api-key': OPERATOR_KEY },
        body: { ...body, tenantId: 'no-such-tenant' },
      }),
      404,
      'NOT_FOUND',
    );
    // The body names the header's tenant, or it is refused.
    const elsewhere = await call(embeddingsUrl, 'POST', '/index', {
      headers: { 'x-tenant-id': 'vec-other', 'x-api-key': OPERATOR_KEY },
      body,
    });
    expectError(elsewhere, 400, 'INVALID_BODY');
    expect(elsewhere.body.details).toEqual([expect.objectContaining({ path: 'tenantId' })]);
    expectError(
      await call(embeddingsUrl, 'POST', '/index', {
        headers: { ...named, 'x-api-key': tenant.apiKey },
        body: { items: [] },
      }),
      400,
      'INVALID_BODY',
    );
  });
});

describe('persistence', () => {
  it('the vectors artifact is built, and serves after a restart before anything is embedded again', async () => {
    const current = path.join(daemon.dataDir, 'artifacts', tenant.tenantId, 'vectors', 'CURRENT');
    await eventually(async () => expect(existsSync(current)).toBe(true));
    const before = await similar('shoes-0');
    const dataDir = daemon.dataDir;
    expect(await daemon.stop()).toBe(0);
    await start(dataDir);
    await daemonReady(daemon.url);
    // The first request after the start: served from the loaded artifact.
    expect(await similar('shoes-0')).toEqual(before);
  });
});

describe('a daemon embedding with a transformers model from a local directory', () => {
  it('says so in /health, embeds items and searches with it', async () => {
    const modelDir = path.join(tempDataDir(), 'tiny-model');
    await makeTinyModel(modelDir);
    const other = await startDaemonProcess({ args: ['--model-dir', modelDir] });
    try {
      const health = await call(other.url, 'GET', '/health');
      expect(health.body.embedder).toEqual({ kind: 'transformers', model: 'tiny-model' });
      const credentials = await createTenant(other.url, 'tiny');
      const auth = tenantHeaders(credentials);
      const items = ITEMS.slice(0, 6);
      expect(
        (await call(other.url, 'POST', '/ingestion/items', { headers: auth, body: { items } })).status,
      ).toBe(200);
      await eventually(async () => {
        const response = await call(
          other.url,
          'GET',
          '/recommendations/search?query=espresso%20machine&count=3',
          {
            headers: auth,
          },
        );
        expect(response.body.items[0].itemId).toMatch(/^coffee-/);
      });
    } finally {
      await other.stop();
      removeDataDir(other.dataDir);
      removeDataDir(path.dirname(modelDir));
    }
  });
});

describe('freshness', () => {
  it('a batch of 10,000 items is searchable within 60 s', async () => {
    const fresh = await createTenant(daemon.url, 'vec-fresh');
    const auth = tenantHeaders(fresh);
    const items = Array.from({ length: 10_000 }, (_, i) => ({
      externalId: `p${i}`,
      category: `c${i % 50}`,
      attributes: { name: `product ${i} model x${i} series ${i % 97}` },
    }));
    items[9_999].attributes.name = 'unmistakable chartreuse velvet armchair';
    // The 60 s count for this batch alone: what earlier tests left to embed is embedded first.
    await vectorsIndexed(daemon.url);
    const started = Date.now();
    expect(
      (await call(daemon.url, 'POST', '/ingestion/items', { headers: auth, body: { items } })).status,
    ).toBe(200);
    await eventually(async () => {
      const response = await call(
        daemon.url,
        'GET',
        '/recommendations/search?query=chartreuse%20velvet%20armchair&count=1',
        { headers: auth },
      );
      expect(response.body.items.map((item: { itemId: string }) => item.itemId)).toEqual(['p9999']);
    }, 60_000);
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});

describe('nextrec embeddings serve', () => {
  it('runs the helper alone on the store of a data dir', async () => {
    const dataDir = tempDataDir();
    const env = { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY };
    const created = await promisify(execFile)(
      process.execPath,
      [BIN, 'tenant', 'create', 'solo', '--data-dir', dataDir],
      {
        env,
      },
    );
    const credentials = JSON.parse(created.stdout) as TenantCredentials;
    const child = spawn(
      process.execPath,
      [BIN, 'embeddings', 'serve', '--port', '0', '--data-dir', dataDir],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /embeddings helper listening on (http:\/\/\S+)/.exec(output);
          if (match) resolve(match[1]);
        });
        child.once('exit', () => reject(new Error(`exited: ${output}`)));
      });
      expect((await call(url, 'GET', '/health')).body).toEqual({
        status: 'ok',
        model: 'hashing-v1',
        collection: 'items',
      });
      const indexed = await call(url, 'POST', '/index', {
        headers: { 'x-tenant-id': 'solo', 'x-api-key': credentials.apiKey },
        body: {
          tenantId: 'solo',
          items: [{ externalId: 'x', attributes: { name: 'blue kettle' } }, { externalId: 'y' }],
        },
      });
      // y has no text to embed.
      expect(indexed.body).toEqual({ indexed: 1 });
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      removeDataDir(dataDir);
    }
  });
});
