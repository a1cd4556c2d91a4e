import { describe, expect, it } from 'vitest';
import { Api, ApiRequestError } from '../../../dashboard/src/api.js';

interface Seen {
  url: string;
  init: RequestInit;
}

function fakeFetch(status: number, body: string, seen: Seen[] = []): typeof fetch {
  return async (input, init) => {
    seen.push({ url: String(input), init: init ?? {} });
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  };
}

describe('dashboard API client', () => {
  it('GETs the same origin with the credentials in headers only', async () => {
    const seen: Seen[] = [];
    const api = new Api({ tenantId: 'demo', secret: 'key-1' }, fakeFetch(200, '{"data":[]}', seen));
    await expect(api.get('/scenarios')).resolves.toEqual({ data: [] });
    expect(seen).toHaveLength(1);
    expect(seen[0].url).toBe('/scenarios');
    expect(seen[0].init.credentials).toBe('omit');
    expect(seen[0].init.headers).toMatchObject({ 'X-Tenant-Id': 'demo', 'X-Api-Key': 'key-1' });
  });

  it('turns an error body into a readable error', async () => {
    const body = JSON.stringify({
      statusCode: 401,
      code: 'UNAUTHORIZED',
      error: 'Unauthorized',
      message: 'nope',
    });
    const api = new Api({ tenantId: 'demo', secret: 'bad' }, fakeFetch(401, body));
    const error = await api.get('/scenarios').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiRequestError);
    expect((error as ApiRequestError).status).toBe(401);
    expect((error as ApiRequestError).code).toBe('UNAUTHORIZED');
    expect((error as ApiRequestError).message).toMatch(/^The credentials were refused/);
  });

  it('reports an unreachable server and an unreadable answer', async () => {
    const down = new Api({ tenantId: 'demo', secret: 'k' }, async () => {
      throw new TypeError('fetch failed');
    });
    await expect(down.get('/x')).rejects.toThrow('The server could not be reached.');
    const garbled = new Api({ tenantId: 'demo', secret: 'k' }, fakeFetch(200, 'not json'));
    await expect(garbled.get('/x')).rejects.toThrow(/could not be read/);
  });
});
