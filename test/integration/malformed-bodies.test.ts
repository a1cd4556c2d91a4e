import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  daemonsOfFile,
  expectError,
  tenantHeaders,
  type DaemonProcess,
  type Response,
  type TenantCredentials,
} from '../support/daemon-process.js';

/**
 * A campaign of malformed requests against the real daemon (docs/errors.md): JSON bodies with lone
 * surrogates, odd escapes, odd JSONPath and wrong types on every route that takes a body, and ids with
 * percent-encoded surrogates in paths and queries. No answer is a 5xx, every string that is not valid
 * Unicode is 400 INVALID_BODY, and what was stored before is intact.
 */

const daemons = daemonsOfFile();
let daemon: DaemonProcess;
let tenant: TenantCredentials;
let embeddingsUrl: string;

const RUNS = 2_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface BodyRoute {
  method: 'POST' | 'PUT';
  path: string;
  body: Json;
  /** Who may call it. */
  access?: 'operator' | 'embeddings';
  /** A valid body would change what the test checks is intact: every request carries a lone surrogate. */
  guarded?: boolean;
  /** The fields holding a JSONPath. */
  jsonPaths?: (string | number)[][];
}

const FEED: { [key: string]: Json } = {
  sourceType: 'api',
  url: 'https://feeds.example/products',
  method: 'POST',
  body: { since: '2026-01-01', fields: ['sku', 'title'] },
  headers: { authorization: 'Bearer x' },
  itemsPath: '$.items',
  itemIdPath: 'sku',
  pagination: { mode: 'cursor', cursorPath: '$.next', cursorParam: 'after' },
  mappingRules: [
    { property: 'name', path: 'title', dataType: 'string', target: 'name' },
    { property: 'tags', path: '$.tags[*]', dataType: 'enum' },
  ],
  scheduleMode: 'cron',
  cron: '0 3 * * *',
};
const FEED_PATHS = [['itemsPath'], ['itemIdPath'], ['pagination', 'cursorPath'], ['mappingRules', 0, 'path']];

/** Every route that takes a JSON body, with a body it would accept (its ids the campaign's own). */
const BODY_ROUTES: BodyRoute[] = [
  { method: 'POST', path: '/catalog/feeds', body: { id: 'fz-feed', ...FEED }, jsonPaths: FEED_PATHS },
  { method: 'PUT', path: '/catalog/feeds/fz-feed', body: FEED, jsonPaths: FEED_PATHS },
  { method: 'PUT', path: '/catalog/feeds/keep', body: FEED, jsonPaths: FEED_PATHS, guarded: true },
  {
    method: 'POST',
    path: '/ingestion/items',
    body: { items: [{ externalId: 'fz-item', category: 'shoes', attributes: { name: 'Fz', tags: ['a'] } }] },
  },
  {
    method: 'POST',
    path: '/ingestion/users',
    body: { users: [{ externalId: 'fz-user', attributes: { t: 'g' } }] },
  },
  {
    method: 'POST',
    path: '/ingestion/interactions',
    body: {
      interactions: [{ userId: 'fz-user', itemId: 'fz-item', type: 'view', eventId: 'fz-e', country: 'DE' }],
    },
  },
  {
    method: 'POST',
    path: '/ingestion/impressions',
    body: { impressions: [{ sessionId: 'fz-s', itemIds: ['fz-item', 'seed-1'], scenarioSlug: 'fz' }] },
  },
  { method: 'POST', path: '/identity/merge', body: { userId: 'fz-user', sessionIds: ['fz-s'] } },
  {
    method: 'POST',
    path: '/recommendations',
    body: { logicType: 'user-to-item', userId: 'seed-u', count: 3, filter: "'price' < 100", boosters: [] },
  },
  { method: 'POST', path: '/recommendations/items-to-items', body: { itemIds: ['seed-1'], count: 3 } },
  {
    method: 'POST',
    path: '/scenarios',
    body: {
      slug: 'fz-scn',
      logicType: 'user-to-item',
      filter: "'price' < 300",
      boosters: ['boost by 1.2 where \'tags\' contains "new"'],
    },
  },
  { method: 'POST', path: '/rules', body: { slug: 'fz-rule', type: 'filter', expression: "'stock' > 0" } },
  {
    method: 'POST',
    path: '/segmentations',
    body: {
      segmentationId: 'fz-seg',
      type: 'auto-nextql',
      expression: 'if \'price\' >= 100 then {"a"} else {"b"}',
    },
  },
  {
    method: 'POST',
    path: '/segmentations/validate-expression',
    body: { expression: "'price' > 1", kind: 'filter' },
  },
  {
    method: 'POST',
    path: '/experiments',
    body: { slug: 'fz-exp', baseScenario: 'keep-scn', variants: [{ scenario: 'keep-scn', weight: 1 }] },
  },
  {
    method: 'POST',
    path: '/catalog/embedding-templates',
    body: { slug: 'fz-tpl', template: '{name} {tags}' },
  },
  {
    method: 'PUT',
    path: '/catalog/vector-defaults',
    body: { hnsw_ef: 64, score_threshold: 0.1 },
    guarded: true,
  },
  {
    method: 'PUT',
    path: '/catalog/tenant-settings',
    body: { fieldMapper: { namePath: 'attributes.name' }, userProvisioningModes: ['on_identity_merge'] },
    guarded: true,
  },
  { method: 'POST', path: '/auth/token', body: { ttlSeconds: 60 } },
  { method: 'POST', path: '/tenants', body: { tenantId: 'fz-tenant' }, access: 'operator' },
  { method: 'PUT', path: '/tenants/fz-t/rate-limits', body: { api: 100 }, access: 'operator', guarded: true },
  {
    method: 'POST',
    path: '/index',
    body: { tenantId: 'fz', items: [{ externalId: 'fz-item', attributes: { name: 'x' } }] },
    access: 'embeddings',
  },
];

/** Escapes that make a string hold a lone surrogate, however the rest of the text reads. */
const LONE_SURROGATES = [
  '\\ud800',
  '\\uDBFF',
  '\\udc00',
  '\\uDFFF',
  '\\udc00\\ud800',
  '\\ud800\\u0041',
  '\\ud83d\\ud83d',
  'x\\ud800',
  '\\ud800\\\\udc00',
];
/** Escapes that are valid JSON, and some that are not. */
const ODD_ESCAPES = [
  '\\u0000',
  '\\u001f',
  '\\/',
  '\\b\\f\\n\\r\\t',
  '\\ud83d\\ude00',
  '\\uFEFF',
  '\\uFFFF',
  '\\\\ud800',
  '\\x41',
  '\\u12',
  '\\U0041',
  '\\',
  '\\u{1F600}',
  '\u0001',
];
const ODD_PATHS = [
  '$',
  '$..',
  '$[',
  "$['a'",
  '$..*',
  '$.a[?(@.b)]',
  '$.a[(1+1)]',
  '$..[*]..[*]',
  '$["\u{1F600}"]',
  "$['\\'']",
  '@',
  '$.constructor',
  '$..__proto__',
  '$.a[-1:]',
  '$.a[0,1,',
  '$^',
  '$.~',
  '$.a..b[*][0:2:0]',
  '.',
  '[',
  ' ',
  '$$',
  "$[?(@.constructor.constructor('return process')())]",
];
const WRONG_TYPES: Json[] = [
  0,
  -1,
  1e308,
  0.5,
  true,
  false,
  null,
  [],
  {},
  [[['x']]],
  '',
  'x'.repeat(600),
  { $ref: '#' },
];

/** One change to a body: at the leaf numbered `at` (modulo the leaves there are). */
type Mutation =
  | { kind: 'surrogate'; at: number; escape: string }
  | { kind: 'surrogate-name'; at: number; escape: string }
  | { kind: 'escape'; at: number; escape: string }
  | { kind: 'type'; at: number; value: Json }
  | { kind: 'path'; at: number; value: string };

type Leaf = (string | number)[];

function leavesOf(value: Json, path: Leaf = [], into: Leaf[] = []): Leaf[] {
  if (value !== null && typeof value === 'object') {
    into.push(path);
    for (const [key, child] of Object.entries(value))
      leavesOf(child, [...path, Array.isArray(value) ? Number(key) : key], into);
  } else into.push(path);
  return into;
}

/** `root` with `value` at `path`; as it was when an earlier change left no object on the way. */
function set(root: Json, path: Leaf, value: Json): Json {
  if (path.length === 0) return value;
  const copy = structuredClone(root);
  let node: Json = copy;
  for (const step of path.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return copy;
    node = (node as { [key: string]: Json })[step];
  }
  if (node === null || typeof node !== 'object') return copy;
  (node as { [key: string]: Json })[path[path.length - 1]] = value;
  return copy;
}

/** The raw text of a body with its mutations; whether a lone surrogate is certainly in a string of it. */
function mutated(route: BodyRoute, mutations: Mutation[]): { text: string; lone: boolean } {
  let body = structuredClone(route.body);
  const marks = new Map<string, string>();
  mutations.forEach((mutation, index) => {
    const mark = `@@mark${index}@@`;
    const leaves = leavesOf(body);
    const leaf = leaves[mutation.at % leaves.length];
    switch (mutation.kind) {
      case 'surrogate':
      case 'escape':
        // Marks land inside a string, where an escape means what it says.
        marks.set(mark, mutation.escape);
        body = set(body, leaf, `${mark}${String(mutation.at)}`);
        break;
      case 'surrogate-name': {
        const objects = leaves.filter((path) => {
          let node: Json = body;
          for (const step of path) node = (node as { [key: string]: Json })[step];
          return node !== null && typeof node === 'object' && !Array.isArray(node);
        });
        if (objects.length === 0) break;
        marks.set(mark, mutation.escape);
        body = set(body, [...objects[mutation.at % objects.length], mark], 1);
        break;
      }
      case 'type':
        body = set(body, leaf, mutation.value);
        break;
      case 'path': {
        const fields = route.jsonPaths ?? [leaf];
        body = set(body, fields[mutation.at % fields.length], mutation.value);
        break;
      }
    }
  });
  let text = JSON.stringify(body);
  // A later mutation may have replaced the string that held an earlier one's surrogate.
  const lone = [...marks].some(([mark, escape]) => LONE_SURROGATES.includes(escape) && text.includes(mark));
  for (const [mark, escape] of marks) text = text.replace(mark, escape);
  return { text, lone };
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('surrogate' as const),
    at: fc.nat(),
    escape: fc.constantFrom(...LONE_SURROGATES),
  }),
  fc.record({
    kind: fc.constant('surrogate-name' as const),
    at: fc.nat(),
    escape: fc.constantFrom(...LONE_SURROGATES),
  }),
  fc.record({ kind: fc.constant('escape' as const), at: fc.nat(), escape: fc.constantFrom(...ODD_ESCAPES) }),
  fc.record({
    kind: fc.constant('type' as const),
    at: fc.nat(),
    value: fc.oneof(fc.constantFrom(...WRONG_TYPES), fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>),
  }),
  fc.record({
    kind: fc.constant('path' as const),
    at: fc.nat(),
    value: fc.oneof(fc.constantFrom(...ODD_PATHS), fc.string({ unit: 'binary', maxLength: 40 })),
  }),
);

/** Paths and queries that carry a percent-encoded surrogate (or its look-alikes) where an id goes. */
const ENCODED_SURROGATES = ['%ED%A0%80', '%ED%BF%BF', '%uD800', '%D8%00', '\\ud800', '%F0%9F%98', '%C0%80'];
const GET_ROUTES = [
  (id: string) => `/catalog/items/${id}`,
  (id: string) => `/catalog/feeds/${id}`,
  (id: string) => `/recommendations/user-to-item/${id}?count=3`,
  (id: string) => `/recommendations/item-to-item/seed-1?userId=${id}`,
  (id: string) => `/recommendations/search?query=${id}&count=3`,
  (id: string) => `/catalog/items?page=${id}`,
  (id: string) => `/users/${id}/export`,
  (id: string) => `/analytics/top-items?from=${id}`,
  (id: string) => `/scenarios/${id}`,
];

type Request =
  { kind: 'body'; route: number; mutations: Mutation[] } | { kind: 'get'; route: number; id: string };

const request: fc.Arbitrary<Request> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record({
      kind: fc.constant('body' as const),
      route: fc.nat({ max: BODY_ROUTES.length - 1 }),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('get' as const),
      route: fc.nat({ max: GET_ROUTES.length - 1 }),
      id: fc
        .tuple(fc.constantFrom(...ENCODED_SURROGATES), fc.constantFrom('', 'seed-1', 'a%20b'))
        .map(([encoded, rest]) => `${rest}${encoded}`),
    }),
  },
);

function headersFor(route: BodyRoute): Record<string, string> {
  if (route.access === 'embeddings') return { 'x-api-key': OPERATOR_KEY, 'x-tenant-id': 'fz' };
  if (route.access === 'operator') return { 'x-api-key': OPERATOR_KEY };
  return tenantHeaders(tenant);
}

async function send(request: Request): Promise<{ response: Response; lone: boolean; text: string }> {
  if (request.kind === 'get') {
    const route = GET_ROUTES[request.route](request.id);
    return {
      response: await call(daemon.url, 'GET', route, { headers: tenantHeaders(tenant) }),
      lone: false,
      text: route,
    };
  }
  const route = BODY_ROUTES[request.route];
  const mutations: Mutation[] = route.guarded
    ? [...request.mutations, { kind: 'surrogate', at: 0, escape: '\\ud800' }]
    : request.mutations;
  const { text, lone } = mutated(route, mutations);
  const base = route.access === 'embeddings' ? embeddingsUrl : daemon.url;
  const response = await call(base, route.method, route.path, { headers: headersFor(route), raw: text });
  return { response, lone: lone || route.guarded === true, text };
}

/** What the campaign must leave as it was. */
async function stored(): Promise<unknown[]> {
  const headers = tenantHeaders(tenant);
  const routes = [
    '/catalog/feeds/keep',
    '/catalog/items/seed-1',
    '/catalog/items/seed-2',
    '/users/seed-u/export',
    '/catalog/tenant-settings',
    '/catalog/vector-defaults',
    '/scenarios/keep-scn',
  ];
  const answers = await Promise.all(routes.map((route) => call(daemon.url, 'GET', route, { headers })));
  for (const answer of answers) expect(answer.status).toBe(200);
  const rateLimits = await call(daemon.url, 'GET', `/tenants/${tenant.tenantId}/rate-limits`, {
    headers: { 'x-api-key': OPERATOR_KEY },
  });
  return [...answers.map((answer) => answer.body), rateLimits.body];
}

beforeAll(async () => {
  daemon = await daemons.start();
  embeddingsUrl = /embeddings helper listening on (http:\/\/\S+)/.exec(daemon.output())![1];
  tenant = await createTenant(daemon.url, 'fuzz');
  const headers = tenantHeaders(tenant);
  const writes: [string, string, Json][] = [
    ['POST', '/catalog/feeds', { id: 'keep', ...FEED }],
    [
      'POST',
      '/ingestion/items',
      {
        items: [
          { externalId: 'seed-1', category: 'bags', attributes: { name: 'Tote', price: 40, tags: ['new'] } },
          { externalId: 'seed-2', category: 'shoes', attributes: { name: 'Boot \u{1F600}', price: 120 } },
        ],
      },
    ],
    ['POST', '/ingestion/users', { users: [{ externalId: 'seed-u', attributes: { tier: 'gold' } }] }],
    [
      'POST',
      '/ingestion/interactions',
      {
        interactions: [
          { userId: 'seed-u', itemId: 'seed-1', type: 'view', eventId: 'seed-e1' },
          { userId: 'seed-u', itemId: 'seed-2', type: 'purchase', eventId: 'seed-e2' },
        ],
      },
    ],
    ['PUT', '/catalog/tenant-settings', { fieldMapper: { namePath: 'attributes.name' } }],
    ['PUT', '/catalog/vector-defaults', { hnsw_ef: 32 }],
    ['POST', '/scenarios', { slug: 'keep-scn', logicType: 'user-to-item' }],
  ];
  for (const [method, route, body] of writes) {
    const answer = await call(daemon.url, method, route, { headers, body });
    expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  }
  const limits = await call(daemon.url, 'PUT', `/tenants/${tenant.tenantId}/rate-limits`, {
    headers: { 'x-api-key': OPERATOR_KEY },
    body: { api: 100_000 },
  });
  expect(limits.status).toBe(200);
});

afterAll(() => daemons.stopAll());

describe('malformed requests', () => {
  it('a lone surrogate in a feed is 400 INVALID_BODY naming where it is', async () => {
    const headers = tenantHeaders(tenant);
    for (const [field, text] of [
      ['itemIdPath', '{"sourceType":"api","url":"https://x.example/","itemIdPath":"\\ud800"}'],
      [
        'itemsPath',
        '{"sourceType":"api","url":"https://x.example/","itemIdPath":"id","itemsPath":"$.a\\udc00"}',
      ],
      ['name', '{"sourceType":"api","url":"https://x.example/","itemIdPath":"id","name":"\\uDBFF!"}'],
      [
        'mappingRules.0.path',
        '{"sourceType":"api","url":"https://x.example/","itemIdPath":"id","mappingRules":[{"property":"p","path":"\\ud800","dataType":"string"}]}',
      ],
    ]) {
      const answer = await call(daemon.url, 'POST', '/catalog/feeds', { headers, raw: text });
      expectError(answer, 400, 'INVALID_BODY');
      expect(answer.body.details).toEqual([
        { path: field, message: expect.stringContaining('lone surrogate') },
      ]);
    }
    // A pair, escaped, is a character like any other.
    const paired = await call(daemon.url, 'POST', '/catalog/feeds', {
      headers,
      raw: '{"id":"paired","sourceType":"api","url":"https://x.example/","itemIdPath":"\\ud83d\\ude00"}',
    });
    expect(paired.status).toBe(201);
    expect(paired.body.itemIdPath).toBe('\u{1F600}');
  });

  it(`${RUNS} malformed requests: no 5xx, surrogates refused, nothing stored before changed`, async () => {
    const before = await stored();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(request, async (request) => {
        const { response, lone, text } = await send(request);
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        expect(response.status, `${text}\n${JSON.stringify(response.body)}`).toBeLessThan(500);
        if (response.status >= 400) {
          expect(response.body).toMatchObject({ statusCode: response.status, code: expect.any(String) });
        }
        if (lone) expectError(response, 400, 'INVALID_BODY');
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
    expect(await stored()).toEqual(before);
    // The campaign reached validation and beyond, not only the parser.
    expect(statuses.get(400)).toBeGreaterThan(RUNS / 4);
    expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
    expect(daemon.output()).not.toContain('unhandled error');
  }, 120_000);
});
