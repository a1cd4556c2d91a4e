/**
 * Every route × every credential kind, against CONTRACT.md ("Credential kinds and scopes", "HMAC signing",
 * "Precise rules"). One daemon for the file; tenant `acme` is the one called, `globex` the foreign one.
 *
 * The matrix cells are collected rather than thrown one by one, so a failing run lists every wrong cell
 * (route, credential, expected and actual answer) at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/client/index.js';
import { issueToken } from '../../src/tenants/jwt.js';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  signedCall,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type Response as ApiResponse,
  type TenantCredentials,
} from '../support/daemon-process.js';

const JWT_SECRET = 'credentials-matrix-jwt-secret-0123456789abcdef';

let daemon: DaemonProcess;
let acme: TenantCredentials;
let globex: TenantCredentials;
/** A tenant only the operator routes touch (its key is rotated there). */
let initech: TenantCredentials;
const jwts = new Map<string, string>();
let expiredJwt: string;

const ACME_ITEMS = ['i1', 'i2', 'i3'];
const ACME_USERS = ['u1', 'u2'];
const GLOBEX_ITEMS = ['g1', 'g2'];
const GLOBEX_USERS = ['gu1'];

/** Names unique within the run: cells that create or delete resources never share them. */
let sequence = 0;
const fresh = (prefix: string) => `${prefix}-${++sequence}`;
/**
 * A value unique per call (1..1000) for bodies that have no name of their own: two identical signed bodies
 * inside one second carry the same signature, and the second would be refused as a replay.
 */
const unique = () => (++sequence % 1000) + 1;

// ---------------------------------------------------------------------------------------------------
// Credentials

type Kind = 'api' | 'private' | 'public' | 'jwt';
type Token = 'private' | 'public';

/** Who may call a route (CONTRACT.md, "Credential kinds and scopes"; POST /auth/token: "with an API key"). */
const SCOPES = {
  tenant: ['api', 'private', 'jwt'],
  browser: ['api', 'private', 'public', 'jwt'],
  admin: ['api', 'jwt'],
  apiKey: ['api'],
} as const satisfies Record<string, readonly Kind[]>;

/** How one request proves who it is: a credential kind of `credentials`, sent for tenant `tenantId`. */
interface As {
  kind: Kind | 'none' | 'expired-jwt';
  credentials: TenantCredentials;
  tenantId: string;
}

const as = (kind: As['kind'], credentials = acme, tenantId = credentials.tenantId): As => ({
  kind,
  credentials,
  tenantId,
});

function send(method: string, target: string, body: unknown, who: As): Promise<ApiResponse> {
  const tenant = { 'x-tenant-id': who.tenantId };
  const bearer = (token: string) => ({ ...tenant, authorization: `Bearer ${token}` });
  switch (who.kind) {
    case 'none':
      return call(daemon.url, method, target, { headers: tenant, body });
    case 'api':
      return call(daemon.url, method, target, {
        headers: { ...tenant, 'x-api-key': who.credentials.apiKey },
        body,
      });
    case 'jwt':
      return call(daemon.url, method, target, { headers: bearer(jwts.get(who.credentials.tenantId)!), body });
    case 'expired-jwt':
      return call(daemon.url, method, target, { headers: bearer(expiredJwt), body });
    default:
      return signedCall(daemon.url, method, target, who.credentials, {
        token: who.kind,
        body,
        headers: tenant,
      });
  }
}

interface Signed {
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** A request of acme signed through the client helper, to be sent (or tampered with) by `sendSigned`. */
async function sign(
  method: string,
  target: string,
  token: Token,
  body?: unknown,
  timestamp?: number,
): Promise<Signed> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const signed = await signRequest({
    method,
    url: target,
    token: token === 'public' ? acme.publicToken : acme.privateToken,
    publicToken: token === 'public',
    body: text,
    timestamp,
  });
  return { url: signed.url, headers: { 'x-tenant-id': 'acme', ...signed.headers }, body: text };
}

function sendSigned(method: string, signed: Signed, change: { url?: string; body?: string } = {}) {
  return call(daemon.url, method, change.url ?? signed.url, {
    headers: signed.headers,
    raw: 'body' in change ? change.body : signed.body,
  });
}

const SIGNING_PARAM = /^(hmac_timestamp|hmac_sign|publicToken)=/;

/** The URL with the value of its first own query parameter changed (`changed`), or with one more (`added`). */
function tamperQuery(url: string, how: 'changed' | 'added'): string {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const params = mark < 0 ? [] : url.slice(mark + 1).split('&');
  const own = params.findIndex((param) => !SIGNING_PARAM.test(param));
  if (how === 'changed') params[own] = `${params[own]}9`;
  else params.push('tampered=1');
  return `${path}?${params.join('&')}`;
}

const hasOwnQuery = (target: string) => target.includes('?');
const nowS = () => Math.floor(Date.now() / 1000);

// ---------------------------------------------------------------------------------------------------
// Routes

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The route as documented. */
  name: string;
  /** The request target of one call; may first create what the call consumes (a resource to delete). */
  target: () => string | Promise<string>;
  body?: () => unknown;
  /** The status of an allowed call. */
  ok: number;
  scope: readonly Kind[];
}

function route(
  method: Route['method'],
  name: string,
  ok: number,
  scope: readonly Kind[],
  extra: {
    target?: string | (() => Promise<string>);
    body?: () => unknown;
  } = {},
): Route {
  const target = extra.target ?? name;
  return {
    method,
    name,
    ok,
    scope,
    body: extra.body,
    target: typeof target === 'string' ? () => target : target,
  };
}

/** Creates a configuration resource with the API key, for a cell that deletes it. */
async function created(collection: string, key: string, body: object): Promise<string> {
  const response = await call(daemon.url, 'POST', `/${collection}`, { headers: tenantHeaders(acme), body });
  expect(response.status, `${collection} fixture ${key}`).toBe(201);
  return `/${collection}/${key}`;
}

/** Ingests a user with one interaction, for a cell that deletes the user. */
async function userToDelete(): Promise<string> {
  const userId = fresh('doomed');
  const headers = tenantHeaders(acme);
  const users = await call(daemon.url, 'POST', '/ingestion/users', {
    headers,
    body: { users: [{ externalId: userId }] },
  });
  const events = await call(daemon.url, 'POST', '/ingestion/interactions', {
    headers,
    body: { interactions: [{ userId, itemId: 'i1', type: 'view' }] },
  });
  expect([users.status, events.status], `user fixture ${userId}`).toEqual([200, 200]);
  return `/users/${userId}`;
}

const RECOMMENDATION_GETS = [
  '/recommendations/user-to-item/u1?count=5',
  '/recommendations/item-to-item/i1',
  '/recommendations/recently-viewed/u1',
  '/recommendations/similar-products/i1',
  '/recommendations/algorithms',
  '/recommendations/algorithms/user-to-item',
];

const ROUTES: Route[] = [
  // Ingestion
  route('POST', '/ingestion/items', 200, SCOPES.tenant, {
    body: () => ({ items: [{ externalId: fresh('extra'), category: 'misc' }] }),
  }),
  route('POST', '/ingestion/users', 200, SCOPES.tenant, {
    body: () => ({ users: [{ externalId: fresh('visitor') }] }),
  }),
  route('POST', '/ingestion/interactions', 200, SCOPES.tenant, {
    body: () => ({ interactions: [{ userId: 'u1', itemId: 'i2', type: 'view', eventId: fresh('event') }] }),
  }),
  route('POST', '/ingestion/impressions', 200, SCOPES.tenant, {
    body: () => ({ impressions: [{ userId: 'u1', itemIds: ['i1', 'i2'], eventId: fresh('impression') }] }),
  }),
  // Catalog
  route('GET', '/catalog/items', 200, SCOPES.tenant, { target: '/catalog/items?page=1&limit=10' }),
  route('GET', '/catalog/items/:externalId', 200, SCOPES.tenant, { target: '/catalog/items/i1' }),
  route('GET', '/catalog/users', 200, SCOPES.tenant),
  route('GET', '/catalog/tenant-settings', 200, SCOPES.tenant),
  route('PUT', '/catalog/tenant-settings', 200, SCOPES.admin, {
    body: () => ({ fieldMapper: { namePath: `attributes.${fresh('name')}` } }),
  }),
  // Recommendations
  route('POST', '/recommendations', 200, SCOPES.browser, {
    body: () => ({ logicType: 'user-to-item', userId: 'u1', count: unique() }),
  }),
  route('POST', '/recommendations/items-to-items', 200, SCOPES.browser, {
    target: '/recommendations/items-to-items?count=5',
    body: () => ({ itemIds: ['i1'], count: unique() }),
  }),
  ...RECOMMENDATION_GETS.map((target) =>
    route('GET', target.replace(/\?.*/, '').replace(/\/(u1|i1)$/, '/:id'), 200, SCOPES.browser, { target }),
  ),
  // Scenarios, rules, segmentations
  route('POST', '/scenarios', 201, SCOPES.tenant, {
    body: () => ({ slug: fresh('scenario'), logicType: 'user-to-item' }),
  }),
  route('GET', '/scenarios', 200, SCOPES.tenant),
  route('GET', '/scenarios/:slug', 200, SCOPES.tenant, { target: '/scenarios/home' }),
  route('PUT', '/scenarios/:slug', 200, SCOPES.tenant, {
    target: '/scenarios/home',
    body: () => ({ logicType: 'user-to-item', name: fresh('Home') }),
  }),
  route('DELETE', '/scenarios/:slug', 204, SCOPES.tenant, {
    target: () => {
      const slug = fresh('gone');
      return created('scenarios', slug, { slug, logicType: 'item-to-item' });
    },
  }),
  route('POST', '/rules', 201, SCOPES.tenant, {
    body: () => ({ slug: fresh('rule'), type: 'filter', expression: "'price' > 10" }),
  }),
  route('GET', '/rules', 200, SCOPES.tenant),
  route('GET', '/rules/:slug', 200, SCOPES.tenant, { target: '/rules/cheap' }),
  route('PUT', '/rules/:slug', 200, SCOPES.tenant, {
    target: '/rules/cheap',
    body: () => ({ type: 'filter', expression: `'price' < ${unique()}` }),
  }),
  route('DELETE', '/rules/:slug', 204, SCOPES.tenant, {
    target: () => {
      const slug = fresh('gone');
      return created('rules', slug, { slug, type: 'booster', expression: "boost by 2 where 'price' > 1" });
    },
  }),
  route('POST', '/segmentations', 201, SCOPES.tenant, {
    body: () => ({ segmentationId: fresh('segmentation'), type: 'property', property: 'category' }),
  }),
  route('GET', '/segmentations', 200, SCOPES.tenant),
  route('GET', '/segmentations/:id', 200, SCOPES.tenant, { target: '/segmentations/by-category' }),
  route('PUT', '/segmentations/:id', 200, SCOPES.tenant, {
    target: '/segmentations/by-category',
    body: () => ({ type: 'property', property: 'category', name: fresh('By category') }),
  }),
  route('DELETE', '/segmentations/:id', 204, SCOPES.tenant, {
    target: () => {
      const id = fresh('gone');
      return created('segmentations', id, { segmentationId: id, type: 'property', property: 'category' });
    },
  }),
  route('POST', '/segmentations/validate-expression', 200, SCOPES.tenant, {
    body: () => ({ expression: `'price' > ${unique()}`, kind: 'filter' }),
  }),
  route('GET', '/segmentations/:id/segments', 200, SCOPES.tenant, {
    target: '/segmentations/by-category/segments',
  }),
  // Identity and users
  route('POST', '/identity/merge', 200, SCOPES.tenant, {
    body: () => ({ userId: fresh('member'), sessionIds: [fresh('session')] }),
  }),
  route('GET', '/users/:userId/export', 200, SCOPES.apiKey, { target: '/users/u1/export' }),
  route('DELETE', '/users/:userId', 204, SCOPES.apiKey, { target: userToDelete }),
  // Tokens
  route('POST', '/auth/token', 200, SCOPES.apiKey, { body: () => ({ ttlSeconds: 600 + unique() }) }),
];

// ---------------------------------------------------------------------------------------------------
// Cells

interface Expected {
  status: number;
  code?: string;
}

const UNAUTHORIZED: Expected = { status: 401, code: 'UNAUTHORIZED' };
const FORBIDDEN_TENANT: Expected = { status: 403, code: 'FORBIDDEN_TENANT' };
const FORBIDDEN_SCOPE: Expected = { status: 403, code: 'FORBIDDEN_SCOPE' };
const SIGNATURE_INVALID: Expected = { status: 401, code: 'SIGNATURE_INVALID' };
const SIGNATURE_EXPIRED: Expected = { status: 401, code: 'SIGNATURE_EXPIRED' };
const SIGNATURE_REPLAYED: Expected = { status: 401, code: 'SIGNATURE_REPLAYED' };

/** The answer of a route to a valid credential of its tenant: allowed, or outside the kind's scope. */
const byScope = (route: Route, kind: Kind): Expected =>
  route.scope.includes(kind) ? { status: route.ok } : FORBIDDEN_SCOPE;

/** Checks one cell; a mismatch is added to `failures` with the cell's label. */
function check(failures: string[], label: string, response: ApiResponse, expected: Expected): void {
  const body = response.body as Record<string, unknown> | undefined;
  const matches =
    response.status === expected.status &&
    (expected.code === undefined ||
      (body?.code === expected.code &&
        body.statusCode === expected.status &&
        typeof body.error === 'string' &&
        typeof body.message === 'string'));
  if (!matches) {
    const want = `${expected.status}${expected.code ? ` ${expected.code}` : ''}`;
    failures.push(
      `${label}: expected ${want}, got ${response.status} ${JSON.stringify(body)?.slice(0, 200)}`,
    );
  }
}

const label = (route: Route, what: string) => `${route.method} ${route.name} [${what}]`;
const withBody = ROUTES.filter((r) => r.body !== undefined);
const notGet = ROUTES.filter((r) => r.method !== 'GET');

// ---------------------------------------------------------------------------------------------------
// Setup

beforeAll(async () => {
  daemon = await startDaemonProcess({ env: { NEXTREC_JWT_SECRET: JWT_SECRET } });
  acme = await createTenant(daemon.url, 'acme');
  globex = await createTenant(daemon.url, 'globex');
  initech = await createTenant(daemon.url, 'initech');

  const seed = async (tenant: TenantCredentials, path: string, body: object, status = 200) => {
    const response = await call(daemon.url, 'POST', path, { headers: tenantHeaders(tenant), body });
    expect(response.status, `seed ${tenant.tenantId} ${path}: ${JSON.stringify(response.body)}`).toBe(status);
  };
  await seed(acme, '/ingestion/items', {
    items: ACME_ITEMS.map((externalId, n) => ({
      externalId,
      category: n % 2 ? 'books' : 'music',
      attributes: { price: 10 * (n + 1), name: `acme ${externalId}` },
    })),
  });
  await seed(acme, '/ingestion/users', { users: ACME_USERS.map((externalId) => ({ externalId })) });
  await seed(acme, '/ingestion/interactions', {
    interactions: [
      { userId: 'u1', itemId: 'i1', type: 'view' },
      { userId: 'u1', itemId: 'i2', type: 'purchase' },
      { userId: 'u2', itemId: 'i2', type: 'view' },
      { userId: 'u2', itemId: 'i3', type: 'cart' },
    ],
  });
  await seed(acme, '/scenarios', { slug: 'home', logicType: 'user-to-item' }, 201);
  await seed(acme, '/rules', { slug: 'cheap', type: 'filter', expression: "'price' < 100" }, 201);
  await seed(
    acme,
    '/segmentations',
    { segmentationId: 'by-category', type: 'property', property: 'category' },
    201,
  );

  await seed(globex, '/ingestion/items', {
    items: GLOBEX_ITEMS.map((externalId) => ({ externalId, category: 'tools', attributes: { price: 5 } })),
  });
  await seed(globex, '/ingestion/users', { users: GLOBEX_USERS.map((externalId) => ({ externalId })) });
  await seed(globex, '/ingestion/interactions', {
    interactions: [
      { userId: 'gu1', itemId: 'g1', type: 'view' },
      { userId: 'gu1', itemId: 'g2', type: 'purchase' },
    ],
  });
  await seed(globex, '/scenarios', { slug: 'globex-home', logicType: 'user-to-item' }, 201);

  for (const tenant of [acme, globex]) {
    const issued = await call(daemon.url, 'POST', '/auth/token', {
      headers: tenantHeaders(tenant),
      body: {},
    });
    expect(issued.status).toBe(200);
    jwts.set(tenant.tenantId, issued.body.token);
  }
  expiredJwt = (await issueToken(JWT_SECRET, 'acme', 1, Date.now() - 3_600_000)).token;
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  removeDataDir(daemon.dataDir);
});

// ---------------------------------------------------------------------------------------------------
// The matrix: one `it` per credential kind, over every tenant route

describe('every tenant route with every credential kind (tenant acme)', () => {
  const kinds: { name: string; who: () => As; expected: (route: Route) => Expected }[] = [
    { name: 'no credential', who: () => as('none'), expected: () => UNAUTHORIZED },
    {
      name: "another tenant's API key",
      who: () => as('api', globex, 'acme'),
      expected: () => FORBIDDEN_TENANT,
    },
    { name: 'API key', who: () => as('api'), expected: (r) => byScope(r, 'api') },
    { name: 'private token (HMAC)', who: () => as('private'), expected: (r) => byScope(r, 'private') },
    { name: 'public token (HMAC)', who: () => as('public'), expected: (r) => byScope(r, 'public') },
    { name: 'JWT', who: () => as('jwt'), expected: (r) => byScope(r, 'jwt') },
    { name: 'expired JWT', who: () => as('expired-jwt'), expected: () => UNAUTHORIZED },
  ];

  for (const kind of kinds) {
    it(`${kind.name}`, async () => {
      const failures: string[] = [];
      for (const r of ROUTES) {
        const response = await send(r.method, await r.target(), r.body?.(), kind.who());
        check(failures, label(r, kind.name), response, kind.expected(r));
      }
      expect(failures).toEqual([]);
    });
  }
});

describe('signed requests that do not verify', () => {
  const tokens: Token[] = ['private', 'public'];

  it('a body other than the signed one: 401 SIGNATURE_INVALID', async () => {
    const failures: string[] = [];
    for (const token of tokens) {
      for (const r of withBody) {
        const signed = await sign(r.method, await r.target(), token, r.body!());
        const other = JSON.stringify(r.body!());
        check(
          failures,
          label(r, `${token}, body`),
          await sendSigned(r.method, signed, { body: other }),
          SIGNATURE_INVALID,
        );
      }
    }
    expect(failures).toEqual([]);
  });

  it('a query other than the signed one (a value changed, a parameter added): 401 SIGNATURE_INVALID', async () => {
    const failures: string[] = [];
    for (const token of tokens) {
      for (const r of ROUTES) {
        const target = await r.target();
        const ways = hasOwnQuery(target) ? (['changed', 'added'] as const) : (['added'] as const);
        for (const how of ways) {
          // Signed anew for each way: a replayed signature would be refused before its query is looked at.
          const signed = await sign(r.method, target, token, r.body?.());
          const response = await sendSigned(r.method, signed, { url: tamperQuery(signed.url, how) });
          check(failures, label(r, `${token}, query ${how}`), response, SIGNATURE_INVALID);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a non-GET signature used twice: the second time 401 SIGNATURE_REPLAYED', async () => {
    const failures: string[] = [];
    for (const token of tokens) {
      for (const r of notGet) {
        const signed = await sign(r.method, await r.target(), token, r.body?.());
        check(
          failures,
          label(r, `${token}, first use`),
          await sendSigned(r.method, signed),
          byScope(r, token),
        );
        check(failures, label(r, `${token}, replay`), await sendSigned(r.method, signed), SIGNATURE_REPLAYED);
      }
    }
    expect(failures).toEqual([]);
  });

  it('a GET signature may be used again inside its window', async () => {
    const failures: string[] = [];
    for (const token of tokens) {
      for (const r of ROUTES.filter((candidate) => candidate.method === 'GET')) {
        const signed = await sign('GET', await r.target(), token);
        for (const use of ['first use', 'second use']) {
          check(failures, label(r, `${token}, ${use}`), await sendSigned('GET', signed), byScope(r, token));
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a timestamp more than 300 s from the server clock: 401 SIGNATURE_EXPIRED', async () => {
    const failures: string[] = [];
    for (const token of tokens) {
      for (const r of ROUTES) {
        // A past skew only grows while the request is signed and sent; a future one shrinks, by more than
        // a second on a busy machine: it starts a minute past the window.
        const skews = { past: nowS() - 301, future: nowS() + 360 };
        for (const [when, timestamp] of Object.entries(skews)) {
          const signed = await sign(r.method, await r.target(), token, r.body?.(), timestamp);
          check(
            failures,
            label(r, `${token}, ${when}`),
            await sendSigned(r.method, signed),
            SIGNATURE_EXPIRED,
          );
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a projection key in the query of a signed POST: 401 SIGNATURE_SCOPE; in a signed GET it is signed', async () => {
    for (const token of tokens) {
      for (const [target, body] of [
        ['/recommendations?includedProperties=category', { logicType: 'user-to-item', userId: 'u1' }],
        ['/recommendations/items-to-items?includedProperties=category', { itemIds: ['i1'] }],
      ] as const) {
        expectError(
          await signedCall(daemon.url, 'POST', target, acme, { token, body: { ...body, count: unique() } }),
          401,
          'SIGNATURE_SCOPE',
        );
      }
      const legacy = await signedCall(
        daemon.url,
        'GET',
        '/recommendations/user-to-item/u1?includedProperties=category',
        acme,
        { token },
      );
      expect(legacy.status, JSON.stringify(legacy.body)).toBe(200);
      expect(legacy.body.items.length).toBeGreaterThan(0);
      for (const item of legacy.body.items) {
        expect(Object.keys(item).every((key) => ['itemId', 'score', 'category'].includes(key))).toBe(true);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Operator routes and health

describe('operator routes', () => {
  const OPERATOR_ROUTES: { method: string; target: string; body?: () => unknown; ok: number }[] = [
    { method: 'GET', target: '/tenants', ok: 200 },
    { method: 'POST', target: '/tenants', body: () => ({ tenantId: fresh('tenant') }), ok: 201 },
    { method: 'POST', target: '/tenants/initech/rotate', body: () => ({ key: 'api' }), ok: 200 },
    { method: 'GET', target: '/tenants/initech/rate-limits', ok: 200 },
    { method: 'PUT', target: '/tenants/initech/rate-limits', body: () => ({}), ok: 200 },
    { method: 'POST', target: '/lake/export', body: () => ({ tenantId: 'initech' }), ok: 200 },
  ];

  it('take the operator key only: none 401, a tenant credential 403 FORBIDDEN_SCOPE', async () => {
    const callers: {
      name: string;
      headers: () => Record<string, string>;
      expected: (ok: number) => Expected;
    }[] = [
      { name: 'no credential', headers: () => ({}), expected: () => UNAUTHORIZED },
      {
        name: 'operator key',
        headers: () => ({ 'x-api-key': OPERATOR_KEY }),
        expected: (ok) => ({ status: ok }),
      },
      { name: 'API key', headers: () => tenantHeaders(acme), expected: () => FORBIDDEN_SCOPE },
      {
        name: 'JWT',
        headers: () => ({ 'x-tenant-id': 'acme', authorization: `Bearer ${jwts.get('acme')}` }),
        expected: () => FORBIDDEN_SCOPE,
      },
      {
        name: 'expired JWT',
        headers: () => ({ authorization: `Bearer ${expiredJwt}` }),
        expected: () => UNAUTHORIZED,
      },
    ];
    const failures: string[] = [];
    for (const caller of callers) {
      for (const r of OPERATOR_ROUTES) {
        const response = await call(daemon.url, r.method, r.target, {
          headers: caller.headers(),
          body: r.body?.(),
        });
        check(failures, `${r.method} ${r.target} [${caller.name}]`, response, caller.expected(r.ok));
      }
    }
    expect(failures).toEqual([]);
    // initech's API key was rotated by the operator (once); the one it was created with no longer verifies.
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(initech) }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('GET /health needs no credential', async () => {
    const health = await call(daemon.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'ok',
      version: expect.any(String),
      uptimeS: expect.any(Number),
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// Request handling order (CONTRACT.md, "Precise rules")

describe('request handling order', () => {
  const MALFORMED = '{"items": [';

  it('an unknown route: 404 NOT_FOUND, whatever the body and without credentials', async () => {
    expectError(await call(daemon.url, 'POST', '/no/such/route', { raw: MALFORMED }), 404, 'NOT_FOUND');
    expectError(
      await call(daemon.url, 'POST', '/ingestion/nothing', {
        headers: { 'x-tenant-id': 'acme' },
        raw: MALFORMED,
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('a missing X-Tenant-Id: 400 TENANT_REQUIRED before any credential is looked at', async () => {
    const withoutTenant = (headers: Record<string, string>) => {
      const rest = { ...headers };
      delete rest['x-tenant-id'];
      return rest;
    };
    expectError(await call(daemon.url, 'GET', '/catalog/items'), 400, 'TENANT_REQUIRED');
    const credentials: Record<string, string>[] = [
      { 'x-api-key': 'nrk_not-a-key' },
      { 'x-api-key': acme.apiKey },
      { authorization: `Bearer ${jwts.get('acme')}` },
      { authorization: `Bearer ${expiredJwt}` },
    ];
    for (const headers of credentials) {
      expectError(await call(daemon.url, 'GET', '/catalog/items', { headers }), 400, 'TENANT_REQUIRED');
    }
    const signed = await sign('POST', '/ingestion/items', 'private', { items: [] });
    expectError(
      await call(daemon.url, 'POST', signed.url, {
        headers: withoutTenant(signed.headers),
        raw: signed.body,
      }),
      400,
      'TENANT_REQUIRED',
    );
  });

  it('a missing or invalid credential: 401 before a malformed body is looked at', async () => {
    const post = (headers: Record<string, string>) =>
      call(daemon.url, 'POST', '/ingestion/items', {
        headers: { 'x-tenant-id': 'acme', ...headers },
        raw: MALFORMED,
      });
    expectError(await post({}), 401, 'UNAUTHORIZED');
    expectError(await post({ 'x-api-key': 'nrk_not-a-key' }), 401, 'UNAUTHORIZED');
    expectError(await post({ authorization: `Bearer ${expiredJwt}` }), 401, 'UNAUTHORIZED');
    // Signed for another body, sent with a malformed one.
    const wrong = await sign('POST', '/ingestion/items', 'private', { items: [] });
    expectError(await sendSigned('POST', wrong, { body: MALFORMED }), 401, 'SIGNATURE_INVALID');
    // Signed for exactly this malformed body: the signature holds, so the body is what fails.
    expectError(
      await signedCall(daemon.url, 'POST', '/ingestion/items', acme, { raw: MALFORMED }),
      400,
      'INVALID_BODY',
    );
    // The API key, for comparison.
    expectError(await post({ 'x-api-key': acme.apiKey }), 400, 'INVALID_BODY');
  });

  it("another tenant's credential and a credential outside its scope: 403 before the body is validated", async () => {
    expectError(
      await call(daemon.url, 'POST', '/ingestion/items', {
        headers: { 'x-tenant-id': 'acme', 'x-api-key': globex.apiKey },
        raw: MALFORMED,
      }),
      403,
      'FORBIDDEN_TENANT',
    );
    for (const body of [{ items: 'not a list' }, { nothing: true }]) {
      expectError(
        await signedCall(daemon.url, 'POST', '/ingestion/items', acme, { token: 'public', body }),
        403,
        'FORBIDDEN_SCOPE',
      );
    }
    expectError(
      await signedCall(daemon.url, 'POST', '/ingestion/items', acme, { token: 'public', raw: MALFORMED }),
      403,
      'FORBIDDEN_SCOPE',
    );
    const settings = await send('PUT', '/catalog/tenant-settings', { dimensions: 'nope' }, as('private'));
    expectError(settings, 403, 'FORBIDDEN_SCOPE');
    // The error names the credentials that may call the route.
    expect((settings.body as { message: string }).message).toBe(
      'a private token (signed request) may not call this route; it takes the API key (X-Api-Key), a JWT (Authorization: Bearer)',
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// Cross-tenant reads

describe("globex's credentials never read acme's data", () => {
  type Body = any; // eslint-disable-line @typescript-eslint/no-explicit-any
  const ids = (list: { externalId?: string; itemId?: string }[]) => list.map((x) => x.externalId ?? x.itemId);
  const only = (allowed: string[]) => (list: { externalId?: string; itemId?: string }[]) =>
    ids(list).every((id) => allowed.includes(id!));

  interface Read {
    method: 'GET' | 'POST';
    target: string;
    body?: unknown;
    scope: readonly Kind[];
    /** What globex gets for its own tenant: an acme-only resource is not found; a list holds only its own. */
    own: Expected & { holds?: (body: Body) => boolean };
  }

  const READS: Read[] = [
    {
      method: 'GET',
      target: '/catalog/items?limit=1000',
      scope: SCOPES.tenant,
      own: { status: 200, holds: (b) => b.total === GLOBEX_ITEMS.length && only(GLOBEX_ITEMS)(b.data) },
    },
    {
      method: 'GET',
      target: '/catalog/items/i1',
      scope: SCOPES.tenant,
      own: { status: 404, code: 'NOT_FOUND' },
    },
    {
      method: 'GET',
      target: '/catalog/users?limit=1000',
      scope: SCOPES.tenant,
      own: { status: 200, holds: (b) => b.total === GLOBEX_USERS.length && only(GLOBEX_USERS)(b.data) },
    },
    {
      method: 'GET',
      target: '/catalog/tenant-settings',
      scope: SCOPES.tenant,
      // acme's settings carry a namePath (the matrix's PUTs); globex's were never set.
      own: { status: 200, holds: (b) => b.fieldMapper.namePath === undefined },
    },
    {
      method: 'GET',
      target: '/scenarios',
      scope: SCOPES.tenant,
      own: { status: 200, holds: (b) => b.data.map((s: Body) => s.slug).join() === 'globex-home' },
    },
    {
      method: 'GET',
      target: '/scenarios/home',
      scope: SCOPES.tenant,
      own: { status: 404, code: 'SCENARIO_NOT_FOUND' },
    },
    {
      method: 'GET',
      target: '/rules',
      scope: SCOPES.tenant,
      own: { status: 200, holds: (b) => b.data.length === 0 },
    },
    { method: 'GET', target: '/rules/cheap', scope: SCOPES.tenant, own: { status: 404, code: 'NOT_FOUND' } },
    {
      method: 'GET',
      target: '/segmentations',
      scope: SCOPES.tenant,
      own: { status: 200, holds: (b) => b.data.length === 0 },
    },
    {
      method: 'GET',
      target: '/segmentations/by-category',
      scope: SCOPES.tenant,
      own: { status: 404, code: 'NOT_FOUND' },
    },
    {
      method: 'GET',
      target: '/segmentations/by-category/segments',
      scope: SCOPES.tenant,
      own: { status: 404, code: 'NOT_FOUND' },
    },
    {
      method: 'GET',
      target: '/users/u1/export',
      scope: SCOPES.apiKey,
      own: { status: 404, code: 'NOT_FOUND' },
    },
    {
      method: 'GET',
      target: '/recommendations/user-to-item/u1?count=10',
      scope: SCOPES.browser,
      own: { status: 200, holds: (b) => b.items.length > 0 && only(GLOBEX_ITEMS)(b.items) },
    },
    {
      method: 'GET',
      target: '/recommendations/item-to-item/i1',
      scope: SCOPES.browser,
      own: { status: 404, code: 'ITEM_NOT_FOUND' },
    },
    {
      method: 'GET',
      target: '/recommendations/recently-viewed/u1',
      scope: SCOPES.browser,
      own: { status: 200, holds: (b) => b.items.length === 0 },
    },
    {
      method: 'GET',
      target: '/recommendations/similar-products/i1',
      scope: SCOPES.browser,
      own: { status: 404, code: 'ITEM_NOT_FOUND' },
    },
    {
      method: 'POST',
      target: '/recommendations',
      body: { logicType: 'user-to-item', userId: 'u1', count: 10 },
      scope: SCOPES.browser,
      own: { status: 200, holds: (b) => b.items.length > 0 && only(GLOBEX_ITEMS)(b.items) },
    },
    {
      method: 'POST',
      target: '/recommendations/items-to-items',
      body: { itemIds: ['i1', 'i2'] },
      scope: SCOPES.browser,
      own: { status: 404, code: 'ITEM_NOT_FOUND' },
    },
  ];

  const KINDS: Kind[] = ['api', 'private', 'public', 'jwt'];
  /** Signed bodies must differ from one request to the next (replay guard): a count per call. */
  const bodyOf = (read: Read) =>
    read.body === undefined ? undefined : { ...(read.body as object), count: unique() };

  it('with X-Tenant-Id globex: acme-only resources are not found and lists hold only globex data', async () => {
    const failures: string[] = [];
    for (const kind of KINDS) {
      for (const read of READS) {
        const response = await send(read.method, read.target, bodyOf(read), as(kind, globex));
        const cell = `${read.method} ${read.target} [globex ${kind}]`;
        if (!read.scope.includes(kind)) {
          check(failures, cell, response, FORBIDDEN_SCOPE);
          continue;
        }
        check(failures, cell, response, read.own);
        if (response.status === 200 && read.own.holds && !read.own.holds(response.body)) {
          failures.push(`${cell}: acme data in ${JSON.stringify(response.body).slice(0, 300)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('with X-Tenant-Id acme: 403 FORBIDDEN_TENANT, or 401 SIGNATURE_INVALID for a private signature', async () => {
    const failures: string[] = [];
    for (const kind of KINDS) {
      // The server checks a private signature with the private token of the tenant named, acme's.
      const expected = kind === 'private' ? SIGNATURE_INVALID : FORBIDDEN_TENANT;
      for (const read of READS) {
        const response = await send(read.method, read.target, bodyOf(read), as(kind, globex, 'acme'));
        check(failures, `${read.method} ${read.target} [globex ${kind} for acme]`, response, expected);
      }
    }
    expect(failures).toEqual([]);
  });
});
