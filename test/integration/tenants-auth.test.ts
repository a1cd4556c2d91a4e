import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  type TenantCredentials,
} from '../support/daemon-process.js';

let daemon: DaemonProcess;
let acme: TenantCredentials;
let globex: TenantCredentials;

beforeAll(async () => {
  daemon = await startDaemonProcess();
  acme = await createTenant(daemon.url, 'acme');
  globex = await createTenant(daemon.url, 'globex');
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  removeDataDir(daemon.dataDir);
});

describe('tenant provisioning', () => {
  it('creates a tenant once with three distinct secrets, then answers 409', async () => {
    expect(Object.keys(acme).sort()).toEqual(['apiKey', 'privateToken', 'publicToken', 'tenantId']);
    expect(new Set([acme.apiKey, acme.privateToken, acme.publicToken]).size).toBe(3);
    const again = await call(daemon.url, 'POST', '/tenants', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { tenantId: 'acme' },
    });
    expectError(again, 409, 'CONFLICT');
  });

  it('lists tenants for the operator only', async () => {
    const list = await call(daemon.url, 'GET', '/tenants', { headers: { 'x-api-key': OPERATOR_KEY } });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ tenants: ['acme', 'globex'] });
    expectError(await call(daemon.url, 'GET', '/tenants'), 401, 'UNAUTHORIZED');
    expectError(
      await call(daemon.url, 'GET', '/tenants', { headers: { 'x-api-key': 'nope' } }),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await call(daemon.url, 'GET', '/tenants', { headers: { 'x-api-key': acme.apiKey } }),
      403,
      'FORBIDDEN_SCOPE',
    );
    expectError(
      await call(daemon.url, 'POST', '/tenants', { headers: tenantHeaders(acme), body: { tenantId: 'x1' } }),
      403,
      'FORBIDDEN_SCOPE',
    );
  });

  it('rejects malformed tenant ids with zod details', async () => {
    const bad = await call(daemon.url, 'POST', '/tenants', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { tenantId: '-bad id' },
    });
    expectError(bad, 400, 'INVALID_BODY');
    expect(bad.body.details[0]).toMatchObject({ path: 'tenantId' });
  });
});

describe('request handling order', () => {
  it('answers 404 for an unknown route before anything else', async () => {
    expectError(await call(daemon.url, 'GET', '/no/such/route'), 404, 'NOT_FOUND');
    expectError(await call(daemon.url, 'POST', '/ingestion/nothing', { body: {} }), 404, 'NOT_FOUND');
  });

  it('needs X-Tenant-Id (400) before credentials (401)', async () => {
    expectError(await call(daemon.url, 'GET', '/catalog/items'), 400, 'TENANT_REQUIRED');
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', { headers: { 'x-api-key': acme.apiKey } }),
      400,
      'TENANT_REQUIRED',
    );
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', { headers: { 'x-tenant-id': 'acme' } }),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', {
        headers: { 'x-tenant-id': 'acme', 'x-api-key': 'nrk_x' },
      }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('answers the same 403 for a foreign and an unknown tenant', async () => {
    const foreign = await call(daemon.url, 'GET', '/catalog/items', {
      headers: { 'x-tenant-id': 'globex', 'x-api-key': acme.apiKey },
    });
    const unknown = await call(daemon.url, 'GET', '/catalog/items', {
      headers: { 'x-tenant-id': 'nobody', 'x-api-key': acme.apiKey },
    });
    expectError(foreign, 403, 'FORBIDDEN_TENANT');
    expect(unknown.status).toBe(foreign.status);
    expect(unknown.body).toEqual(foreign.body);
  });

  it('checks credentials before validating the body', async () => {
    const response = await call(daemon.url, 'POST', '/ingestion/items', {
      headers: { 'x-tenant-id': 'acme' },
      raw: '{not json',
    });
    expectError(response, 401, 'UNAUTHORIZED');
  });

  it('keeps public and private tokens out of routes beyond their scope', async () => {
    expectError(
      await signedCall(daemon.url, 'POST', '/ingestion/items', acme, {
        token: 'public',
        body: { items: [] },
      }),
      403,
      'FORBIDDEN_SCOPE',
    );
    expectError(
      await signedCall(daemon.url, 'PUT', '/catalog/tenant-settings', acme, { body: {} }),
      403,
      'FORBIDDEN_SCOPE',
    );
    // A signature that verifies is a tenant credential: the operator's routes refuse it as such.
    expectError(await signedCall(daemon.url, 'GET', '/tenants', acme), 403, 'FORBIDDEN_SCOPE');
    expectError(
      await signedCall(daemon.url, 'POST', '/tenants', acme, { body: { tenantId: 'x2' } }),
      403,
      'FORBIDDEN_SCOPE',
    );
    expectError(
      await signedCall(daemon.url, 'GET', '/tenants', { ...acme, privateToken: 'nrp_wrong' }),
      401,
      'SIGNATURE_INVALID',
    );
    // Tokens sign requests; sent as an API key they are not credentials at all.
    expectError(
      await call(daemon.url, 'GET', '/catalog/items', {
        headers: { 'x-tenant-id': 'acme', 'x-api-key': acme.privateToken },
      }),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('tenant isolation', () => {
  it('never shows one tenant the data of another', async () => {
    await call(daemon.url, 'POST', '/ingestion/items', {
      headers: tenantHeaders(acme),
      body: {
        items: [{ externalId: 'shared-id', attributes: { owner: 'acme' } }, { externalId: 'acme-only' }],
      },
    });
    await call(daemon.url, 'POST', '/ingestion/items', {
      headers: tenantHeaders(globex),
      body: { items: [{ externalId: 'shared-id', attributes: { owner: 'globex' } }] },
    });
    const acmeItem = await call(daemon.url, 'GET', '/catalog/items/shared-id', {
      headers: tenantHeaders(acme),
    });
    const globexItem = await call(daemon.url, 'GET', '/catalog/items/shared-id', {
      headers: tenantHeaders(globex),
    });
    expect(acmeItem.body.attributes).toEqual({ owner: 'acme' });
    expect(globexItem.body.attributes).toEqual({ owner: 'globex' });
    expectError(
      await call(daemon.url, 'GET', '/catalog/items/acme-only', { headers: tenantHeaders(globex) }),
      404,
      'NOT_FOUND',
    );
    const globexList = await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(globex) });
    expect(globexList.body.total).toBe(1);
    expect(globexList.body.data.map((item: { externalId: string }) => item.externalId)).toEqual([
      'shared-id',
    ]);
  });
});

describe('logs', () => {
  it('never contain a secret', async () => {
    // Provoke error paths that carry credentials in headers.
    await call(daemon.url, 'GET', '/catalog/items', {
      headers: { 'x-tenant-id': 'globex', 'x-api-key': acme.apiKey },
    });
    await call(daemon.url, 'GET', '/catalog/items?publicToken=' + acme.publicToken, {
      headers: tenantHeaders(acme),
    });
    const output = daemon.output();
    for (const secret of [acme.apiKey, acme.privateToken, acme.publicToken, globex.apiKey, OPERATOR_KEY]) {
      expect(output).not.toContain(secret);
    }
  });
});

describe('requests people get wrong', () => {
  it('issue a token and export the lake without a body, with or without a JSON content type', async () => {
    for (const headers of [
      tenantHeaders(acme),
      { ...tenantHeaders(acme), 'content-type': 'application/json' },
    ]) {
      const token = await fetch(`${daemon.url}/auth/token`, { method: 'POST', headers });
      expect(token.status).toBe(200);
      expect((await token.json()) as object).toMatchObject({ token: expect.any(String) });
    }
    const exported = await call(daemon.url, 'POST', '/lake/export', {
      headers: { 'x-api-key': OPERATOR_KEY },
    });
    expect(exported.status).toBe(200);
    expect(exported.body.exported.map((entry: { tenantId: string }) => entry.tenantId).sort()).toEqual(
      expect.arrayContaining(['acme', 'globex']),
    );
  });

  it('say that the operator key is not a tenant credential on a tenant route', async () => {
    const response = await call(daemon.url, 'GET', '/scenarios', {
      headers: { 'x-tenant-id': 'acme', 'x-api-key': OPERATOR_KEY },
    });
    expectError(response, 401, 'UNAUTHORIZED');
    expect(response.body.message).toContain('the operator key is not a tenant credential');
  });
});
