import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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

let daemon: DaemonProcess;
let shop: TenantCredentials;
let other: TenantCredentials;
let headers: Record<string, string>;

beforeAll(async () => {
  daemon = await startDaemonProcess();
  shop = await createTenant(daemon.url, 'shop');
  other = await createTenant(daemon.url, 'other');
  headers = tenantHeaders(shop);
  const items = [
    { externalId: 'i1', category: 'books', attributes: { price: 150, genres: ['rock', 'jazz'] } },
    { externalId: 'i2', category: 'books', attributes: { price: 50, genres: ['rock', 'rock'] } },
    { externalId: 'i3', category: 'music', attributes: { price: 300, genres: [] } },
    { externalId: 'i4', attributes: { price: 20 } },
  ];
  expect((await call(daemon.url, 'POST', '/ingestion/items', { headers, body: { items } })).status).toBe(200);
  // An item only known from an event is not in the catalog, and so in no segment.
  const interactions = [{ userId: 'u1', itemId: 'ghost', type: 'view' }];
  await call(daemon.url, 'POST', '/ingestion/interactions', { headers, body: { interactions } });
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

function send(
  method: string,
  route: string,
  body?: unknown,
  as: Record<string, string> | 'private' | 'public' = headers,
) {
  if (typeof as === 'string') return signedCall(daemon.url, method, route, shop, { token: as, body });
  return call(daemon.url, method, route, { headers: as, body });
}

const SCENARIO_DEFAULTS = {
  boosters: [],
  constraints: {},
  rulesSlugs: [],
  autoRelaxConstraints: false,
  autoRelaxFilters: false,
  relaxEntireFilterOnEmpty: false,
  autoExpandSegments: true,
};

describe('scenarios', () => {
  it('creates with defaults filled, reads one, and lists sorted by slug', async () => {
    const created = await send('POST', '/scenarios', {
      slug: 'home',
      logicType: 'user-to-item',
      filter: "'price' > 10",
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      slug: 'home',
      logicType: 'user-to-item',
      filter: "'price' > 10",
      ...SCENARIO_DEFAULTS,
    });
    expect((await send('POST', '/scenarios', { slug: 'basket', logicType: 'item-to-item' })).status).toBe(
      201,
    );

    const one = await send('GET', '/scenarios/home');
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created.body);
    const list = await send('GET', '/scenarios');
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { slug: string }) => s.slug)).toEqual(['basket', 'home']);
    expect(list.body.data[1]).toEqual(created.body);
  });

  it('answers 409 CONFLICT for an existing slug, also to concurrent creates', async () => {
    expectError(
      await send('POST', '/scenarios', { slug: 'home', logicType: 'item-to-item' }),
      409,
      'CONFLICT',
    );
    const racers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        send('POST', '/scenarios', { slug: 'race', name: `racer-${i}`, logicType: 'recently-viewed' }),
      ),
    );
    const winners = racers.filter((response) => response.status === 201);
    expect(winners).toHaveLength(1);
    for (const loser of racers.filter((response) => response.status !== 201)) {
      expectError(loser, 409, 'CONFLICT');
    }
    expect((await send('GET', '/scenarios/race')).body).toEqual(winners[0].body);
  });

  it('answers 400 INVALID_BODY with zod details', async () => {
    const missing = await send('POST', '/scenarios', { slug: 'x' });
    expectError(missing, 400, 'INVALID_BODY');
    expect(missing.body.details).toContainEqual(expect.objectContaining({ path: 'logicType' }));
    for (const body of [
      { slug: 'x', logicType: 'best-sellers' },
      { slug: 'x', logicType: 'user-to-item', unknown: 1 },
      { slug: 'x y', logicType: 'user-to-item' },
      { slug: 'x', logicType: 'user-to-item', constraints: { maxPerCategory: 0 } },
      { slug: 'x', logicType: 'user-to-item', minItems: 5, maxItems: 2 },
      [],
    ]) {
      const response = await send('POST', '/scenarios', body);
      expectError(response, 400, 'INVALID_BODY');
      expect(response.body.details[0]).toMatchObject({
        path: expect.any(String),
        message: expect.any(String),
      });
    }
    expectError(
      await call(daemon.url, 'POST', '/scenarios', { headers, raw: '{"slug": ' }),
      400,
      'INVALID_BODY',
    );
    expect((await send('GET', '/scenarios/x')).status).toBe(404);
  });

  it('answers 400 INVALID_BODY for an algorithm that does not exist or does not rank its logic type', async () => {
    const unknown = await send('POST', '/scenarios', {
      slug: 'algo-1',
      logicType: 'user-to-item',
      algorithm: 'nope',
    });
    expectError(unknown, 400, 'INVALID_BODY');
    expect(unknown.body.message).toContain("there is no algorithm 'nope'");
    expect(unknown.body.message).toContain('weighted-history');
    const wrong = await send('POST', '/scenarios', {
      slug: 'algo-2',
      logicType: 'user-to-item',
      algorithm: 'co-occurrence',
    });
    expectError(wrong, 400, 'INVALID_BODY');
    expect(wrong.body.message).toContain("'co-occurrence' does not rank user-to-item lists");
    expect((await send('GET', '/scenarios/algo-2')).status).toBe(404);
    const right = await send('POST', '/scenarios', {
      slug: 'algo-3',
      logicType: 'user-to-item',
      algorithm: 'matrix-factorization',
    });
    expect(right.status).toBe(201);
    const replaced = await send('PUT', '/scenarios/algo-3', { logicType: 'user-to-item', algorithm: 'nope' });
    expectError(replaced, 400, 'INVALID_BODY');
    expect((await send('DELETE', '/scenarios/algo-3')).status).toBe(204);
  });

  it('answers 400 INVALID_EXPRESSION with the position of the error', async () => {
    const filter = await send('POST', '/scenarios', {
      slug: 'x',
      logicType: 'user-to-item',
      filter: "'price' > 10 and\n  'stock' = ",
    });
    expectError(filter, 400, 'INVALID_EXPRESSION');
    expect(filter.body.details[0]).toEqual({
      message: expect.stringContaining("expected a value after '='"),
      position: 29,
      line: 2,
      column: 13,
      path: 'filter',
    });
    const booster = await send('POST', '/scenarios', {
      slug: 'x',
      logicType: 'user-to-item',
      boosters: ['boost by 2 where \'brand\' = "acme"', 'boost by 2 where'],
    });
    expectError(booster, 400, 'INVALID_EXPRESSION');
    expect(booster.body.details[0]).toMatchObject({ position: 16, line: 1, column: 17, path: 'boosters.1' });
  });

  it('replaces the whole scenario on PUT: omitted fields return to their defaults', async () => {
    const full = await send('PUT', '/scenarios/home', {
      slug: 'home',
      name: 'Home page',
      logicType: 'user-to-item',
      boosters: ['boost by 2 where \'brand\' = "acme"'],
      constraints: { maxPerCategory: 2 },
      autoRelaxFilters: true,
      autoExpandSegments: false,
      segmentationId: 'by-category',
      itemsPerSegment: 2,
    });
    expect(full.status).toBe(200);
    expect((await send('GET', '/scenarios/home')).body).toEqual(full.body);

    const bare = await send('PUT', '/scenarios/home', { logicType: 'item-to-item' });
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({ slug: 'home', logicType: 'item-to-item', ...SCENARIO_DEFAULTS });
    expect((await send('GET', '/scenarios/home')).body).toEqual(bare.body);
  });

  it('rejects a PUT whose slug differs from the path, and validates before answering 404', async () => {
    const mismatch = await send('PUT', '/scenarios/home', { slug: 'basket', logicType: 'item-to-item' });
    expectError(mismatch, 400, 'INVALID_BODY');
    expect(mismatch.body.details[0]).toMatchObject({ path: 'slug' });
    expect((await send('GET', '/scenarios/basket')).body.logicType).toBe('item-to-item');

    expectError(
      await send('PUT', '/scenarios/nope', { logicType: 'item-to-item' }),
      404,
      'SCENARIO_NOT_FOUND',
    );
    expectError(await send('PUT', '/scenarios/nope', { logicType: 'nope' }), 400, 'INVALID_BODY');
    expectError(
      await send('PUT', '/scenarios/nope', { logicType: 'item-to-item', filter: "'a' >" }),
      400,
      'INVALID_EXPRESSION',
    );
  });

  it('deletes with 204 and no body, then answers 404', async () => {
    const deleted = await send('DELETE', '/scenarios/race');
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();
    expectError(await send('GET', '/scenarios/race'), 404, 'SCENARIO_NOT_FOUND');
    expectError(await send('DELETE', '/scenarios/race'), 404, 'SCENARIO_NOT_FOUND');
    expect((await send('POST', '/scenarios', { slug: 'race', logicType: 'user-to-item' })).status).toBe(201);
  });

  it('deletes when the client sends a JSON content type with an empty body', async () => {
    expect((await send('POST', '/scenarios', { slug: 'typed', logicType: 'item-to-item' })).status).toBe(201);
    const jsonHeaders = { ...headers, 'content-type': 'application/json' };
    const deleted = await call(daemon.url, 'DELETE', '/scenarios/typed', { headers: jsonHeaders, raw: '' });
    expect(deleted.status).toBe(204);
    expectError(await send('GET', '/scenarios/typed'), 404, 'SCENARIO_NOT_FOUND');
    // A body is still required where the route has one.
    expectError(
      await call(daemon.url, 'POST', '/scenarios', { headers: jsonHeaders, raw: '' }),
      400,
      'INVALID_BODY',
    );
  });
});

describe('rules', () => {
  it('creates filter, booster and constraint rules and lists them by slug', async () => {
    const booster = await send('POST', '/rules', {
      slug: 'acme-boost',
      type: 'booster',
      expression: 'boost by 2 where \'brand\' = "acme"',
      priority: 5,
    });
    expect(booster.status).toBe(201);
    expect(booster.body).toEqual({
      slug: 'acme-boost',
      type: 'booster',
      expression: 'boost by 2 where \'brand\' = "acme"',
      priority: 5,
    });
    const filter = await send('POST', '/rules', {
      slug: 'in-stock',
      type: 'filter',
      expression: "'stock' > 0",
    });
    expect(filter.body).toEqual({ slug: 'in-stock', type: 'filter', expression: "'stock' > 0", priority: 0 });
    const constraint = await send('POST', '/rules', {
      slug: 'diverse',
      name: 'Diverse',
      type: 'constraint',
      constraints: { maxPerCategory: 3 },
    });
    expect(constraint.status).toBe(201);

    const list = await send('GET', '/rules');
    expect(list.body.data.map((r: { slug: string }) => r.slug)).toEqual([
      'acme-boost',
      'diverse',
      'in-stock',
    ]);
    expect((await send('GET', '/rules/diverse')).body).toEqual(constraint.body);
    expectError(
      await send('POST', '/rules', { slug: 'in-stock', type: 'filter', expression: "'a' = 1" }),
      409,
      'CONFLICT',
    );
  });

  it('validates the type, the fields it needs and its expression', async () => {
    for (const body of [
      { slug: 'r', type: 'filter' },
      { slug: 'r', type: 'constraint' },
      { slug: 'r', type: 'sorter', expression: "'a' = 1" },
      { slug: 'r', type: 'filter', expression: "'a' = 1", priority: 1.5 },
    ]) {
      expectError(await send('POST', '/rules', body), 400, 'INVALID_BODY');
    }
    const wrongKind = await send('POST', '/rules', {
      slug: 'r',
      type: 'filter',
      expression: 'boost by 2 where \'brand\' = "acme"',
    });
    expectError(wrongKind, 400, 'INVALID_EXPRESSION');
    expect(wrongKind.body.details[0]).toMatchObject({ position: 0, line: 1, column: 1, path: 'expression' });
  });

  it('replaces on PUT, keyed by the path, and deletes', async () => {
    const replaced = await send('PUT', '/rules/acme-boost', { type: 'filter', expression: "'price' < 100" });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      slug: 'acme-boost',
      type: 'filter',
      expression: "'price' < 100",
      priority: 0,
    });
    expectError(
      await send('PUT', '/rules/acme-boost', { slug: 'other', type: 'filter', expression: "'a' = 1" }),
      400,
      'INVALID_BODY',
    );
    expectError(
      await send('PUT', '/rules/nope', { type: 'filter', expression: "'a' = 1" }),
      404,
      'NOT_FOUND',
    );
    expect((await send('DELETE', '/rules/in-stock')).status).toBe(204);
    expectError(await send('GET', '/rules/in-stock'), 404, 'NOT_FOUND');
    expectError(await send('DELETE', '/rules/in-stock'), 404, 'NOT_FOUND');
  });
});

describe('segmentations', () => {
  const PREMIUM = `if 'price' > 100 then {"premium"} else {"budget"}`;
  const GENRES = `map(lambda g: string(g, "genre-%s"), 'genres') + {"all"}`;

  it('creates property and auto-nextql segmentations and lists them by id', async () => {
    const byCategory = await send('POST', '/segmentations', {
      segmentationId: 'by-category',
      name: 'Category',
      type: 'property',
      property: 'category',
      propertyType: 'string',
    });
    expect(byCategory.status).toBe(201);
    expect(byCategory.body).toEqual({
      segmentationId: 'by-category',
      name: 'Category',
      type: 'property',
      property: 'category',
      propertyType: 'string',
    });
    for (const body of [
      { segmentationId: 'price-band', type: 'auto-nextql', expression: PREMIUM },
      { segmentationId: 'genres', type: 'auto-nextql', expression: GENRES },
      { segmentationId: 'by-genre', type: 'property', property: 'attributes.genres' },
    ]) {
      const created = await send('POST', '/segmentations', body);
      expect(created.status).toBe(201);
      expect(created.body).toEqual(body);
    }
    const list = await send('GET', '/segmentations');
    expect(list.body.data.map((s: { segmentationId: string }) => s.segmentationId)).toEqual([
      'by-category',
      'by-genre',
      'genres',
      'price-band',
    ]);
    expect((await send('GET', '/segmentations/by-category')).body).toEqual(byCategory.body);
    expectError(
      await send('POST', '/segmentations', {
        segmentationId: 'genres',
        type: 'property',
        property: 'category',
      }),
      409,
      'CONFLICT',
    );
  });

  it('validates the fields each type needs and the expression', async () => {
    for (const body of [
      { segmentationId: 's', type: 'property' },
      { segmentationId: 's', type: 'auto-nextql' },
      { segmentationId: 's', type: 'cluster', property: 'category' },
      { type: 'property', property: 'category' },
    ]) {
      expectError(await send('POST', '/segmentations', body), 400, 'INVALID_BODY');
    }
    const invalid = await send('POST', '/segmentations', {
      segmentationId: 's',
      type: 'auto-nextql',
      expression: `if 'price' > 100 then {"a"}`,
    });
    expectError(invalid, 400, 'INVALID_EXPRESSION');
    expect(invalid.body.details[0]).toEqual({
      message: expect.any(String),
      position: 27,
      line: 1,
      column: 28,
      path: 'expression',
    });
  });

  it('computes segments over the catalog items, largest first, then by name', async () => {
    const segments = async (id: string) => {
      const response = await send('GET', `/segmentations/${id}/segments`);
      expect(response.status).toBe(200);
      return response.body.data;
    };
    expect(await segments('by-category')).toEqual([
      { name: 'books', itemCount: 2 },
      { name: 'music', itemCount: 1 },
    ]);
    expect(await segments('by-genre')).toEqual([
      { name: 'rock', itemCount: 2 },
      { name: 'jazz', itemCount: 1 },
    ]);
    expect(await segments('price-band')).toEqual([
      { name: 'budget', itemCount: 2 },
      { name: 'premium', itemCount: 2 },
    ]);
    expect(await segments('genres')).toEqual([
      { name: 'all', itemCount: 4 },
      { name: 'genre-rock', itemCount: 2 },
      { name: 'genre-jazz', itemCount: 1 },
    ]);

    const items = [
      { externalId: 'i4', category: 'music' },
      { externalId: 'i5', category: 'music' },
    ];
    await send('POST', '/ingestion/items', { items });
    expect(await segments('by-category')).toEqual([
      { name: 'music', itemCount: 3 },
      { name: 'books', itemCount: 2 },
    ]);
    expectError(await send('GET', '/segmentations/nope/segments'), 404, 'NOT_FOUND');
  });

  it('replaces on PUT (new definition, new segments) and deletes', async () => {
    const replaced = await send('PUT', '/segmentations/by-category', {
      type: 'auto-nextql',
      expression: `if 'price' > 200 then {"luxury"} else {}`,
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      segmentationId: 'by-category',
      type: 'auto-nextql',
      expression: `if 'price' > 200 then {"luxury"} else {}`,
    });
    expect((await send('GET', '/segmentations/by-category/segments')).body).toEqual({
      data: [{ name: 'luxury', itemCount: 1 }],
    });
    expectError(
      await send('PUT', '/segmentations/by-category', {
        segmentationId: 'genres',
        type: 'property',
        property: 'category',
      }),
      400,
      'INVALID_BODY',
    );
    expectError(
      await send('PUT', '/segmentations/nope', { type: 'property', property: 'category' }),
      404,
      'NOT_FOUND',
    );
    expect((await send('DELETE', '/segmentations/genres')).status).toBe(204);
    expectError(await send('GET', '/segmentations/genres'), 404, 'NOT_FOUND');
    expectError(await send('DELETE', '/segmentations/genres'), 404, 'NOT_FOUND');
  });

  it('deletes a segmentation that a scenario references; the scenario stays', async () => {
    await send('POST', '/segmentations', {
      segmentationId: 'linked',
      type: 'property',
      property: 'category',
    });
    await send('POST', '/scenarios', { slug: 'linked', logicType: 'user-to-item', segmentationId: 'linked' });
    expect((await send('DELETE', '/segmentations/linked')).status).toBe(204);
    expect((await send('GET', '/scenarios/linked')).body.segmentationId).toBe('linked');
  });

  it('validates expressions of each kind without storing anything', async () => {
    const validate = (body: unknown) => send('POST', '/segmentations/validate-expression', body);
    expect((await validate({ expression: PREMIUM, kind: 'segmentation' })).body).toEqual({ valid: true });
    expect((await validate({ expression: "'price' > 1", kind: 'filter' })).body).toEqual({ valid: true });
    const invalid = await validate({ expression: "'price' >", kind: 'filter' });
    expect(invalid.status).toBe(200);
    expect(invalid.body).toEqual({
      valid: false,
      error: { message: expect.stringContaining("after '>'"), position: 9, line: 1, column: 10 },
    });
    expect((await validate({ expression: "'price' > 1", kind: 'booster' })).body.valid).toBe(false);
    for (const body of [
      { expression: "'price' > 1" },
      { expression: "'price' > 1", kind: 'sorter' },
      { expression: 5, kind: 'filter' },
      { expression: "'price' > 1", kind: 'filter', extra: true },
    ]) {
      expectError(await validate(body), 400, 'INVALID_BODY');
    }
  });
});

describe('access', () => {
  it('keeps tenants apart', async () => {
    const otherHeaders = tenantHeaders(other);
    for (const route of ['/scenarios', '/rules', '/segmentations']) {
      expect((await send('GET', route, undefined, otherHeaders)).body).toEqual({ data: [] });
    }
    expectError(await send('GET', '/scenarios/home', undefined, otherHeaders), 404, 'SCENARIO_NOT_FOUND');
    expectError(
      await send('GET', '/segmentations/price-band/segments', undefined, otherHeaders),
      404,
      'NOT_FOUND',
    );
    const own = await send(
      'POST',
      '/scenarios',
      { slug: 'home', logicType: 'recently-viewed' },
      otherHeaders,
    );
    expect(own.status).toBe(201);
    expect((await send('GET', '/scenarios/home')).body.logicType).toBe('item-to-item');
    expectError(
      await send('GET', '/scenarios', undefined, { 'x-tenant-id': 'shop', 'x-api-key': other.apiKey }),
      403,
      'FORBIDDEN_TENANT',
    );
  });

  it('lets the private token manage configuration and refuses the public token, before validation', async () => {
    const privateHeaders = 'private' as const;
    const created = await send(
      'POST',
      '/rules',
      { slug: 'private', type: 'filter', expression: "'a' = 1" },
      privateHeaders,
    );
    expect(created.status).toBe(201);
    expect((await send('GET', '/rules/private', undefined, privateHeaders)).status).toBe(200);
    expect((await send('DELETE', '/rules/private', undefined, privateHeaders)).status).toBe(204);

    const publicHeaders = 'public' as const;
    for (const [method, route, body] of [
      ['POST', '/scenarios', { slug: 'p', logicType: 'user-to-item' }],
      ['POST', '/scenarios', { invalid: true }],
      ['PUT', '/scenarios/home', { logicType: 'user-to-item' }],
      ['DELETE', '/scenarios/home', undefined],
      ['POST', '/rules', { slug: 'p', type: 'filter', expression: "'a' = 1" }],
      ['PUT', '/rules/diverse', { type: 'constraint', constraints: {} }],
      ['DELETE', '/rules/diverse', undefined],
      ['POST', '/segmentations', { segmentationId: 'p', type: 'property', property: 'category' }],
      ['PUT', '/segmentations/price-band', { type: 'property', property: 'category' }],
      ['DELETE', '/segmentations/price-band', undefined],
      ['POST', '/segmentations/validate-expression', { expression: "'a' = 1", kind: 'filter' }],
      ['GET', '/scenarios', undefined],
      ['GET', '/segmentations/price-band/segments', undefined],
    ] as const) {
      expectError(await send(method, route, body, publicHeaders), 403, 'FORBIDDEN_SCOPE');
    }
    expectError(await send('GET', '/scenarios', undefined, { 'x-tenant-id': 'shop' }), 401, 'UNAUTHORIZED');
    expectError(
      await send('POST', '/scenarios', { invalid: true }, { 'x-api-key': shop.apiKey }),
      400,
      'TENANT_REQUIRED',
    );
    expect((await send('GET', '/scenarios/home')).status).toBe(200);
  });

  it('documents the routes in the OpenAPI document', async () => {
    const openapi = await call(daemon.url, 'GET', '/openapi.json');
    expect(Object.keys(openapi.body.paths)).toEqual(
      expect.arrayContaining(['/scenarios', '/rules/{slug}', '/segmentations/{id}/segments']),
    );
  });
});

describe('persistence', () => {
  it('keeps every configuration resource across a restart', async () => {
    const before = await Promise.all(
      ['/scenarios', '/rules', '/segmentations'].map((route) => send('GET', route)),
    );
    const otherBefore = await send('GET', '/scenarios', undefined, tenantHeaders(other));
    const segmentsBefore = await send('GET', '/segmentations/price-band/segments');

    await daemon.stop();
    daemon = await startDaemonProcess({ dataDir: daemon.dataDir });

    const after = await Promise.all(
      ['/scenarios', '/rules', '/segmentations'].map((route) => send('GET', route)),
    );
    expect(after.map((response) => response.body)).toEqual(before.map((response) => response.body));
    expect(after[0].body.data.map((s: { slug: string }) => s.slug)).toEqual([
      'basket',
      'home',
      'linked',
      'race',
    ]);
    expect((await send('GET', '/scenarios', undefined, tenantHeaders(other))).body).toEqual(otherBefore.body);
    expect((await send('GET', '/segmentations/price-band/segments')).body).toEqual(segmentsBefore.body);
    expectError(await send('GET', '/segmentations/genres'), 404, 'NOT_FOUND');
    expectError(
      await send('POST', '/scenarios', { slug: 'home', logicType: 'user-to-item' }),
      409,
      'CONFLICT',
    );
  });
});
