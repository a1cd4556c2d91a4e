import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type Response,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { queryStore } from '../support/store-file.js';

/**
 * A daemon with a write queue of one record (so that concurrent ingestion overflows it), a request
 * timeout of 2 s, and a metrics port of its own.
 */
const ARGS = ['--write-queue-limit', '1', '--request-timeout', '2', '--metrics-port', '0'];

let daemon: DaemonProcess;
let shop: TenantCredentials;
let headers: Record<string, string>;
let port: number;

beforeAll(async () => {
  daemon = await startDaemonProcess({ args: ARGS });
  shop = await createTenant(daemon.url, 'shop');
  headers = tenantHeaders(shop);
  port = Number(new URL(daemon.url).port);
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

/** Sends raw bytes on a new connection and resolves with what came back once the daemon closed it. */
function rawExchange(bytes: string | Buffer): Promise<{ status: number; headers: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // The daemon may close while the client still sends (oversized input): what it answered counts.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(text)}`));
      const head = text.slice(0, split);
      const body = text.slice(split + 4);
      resolve({ status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) });
    });
    socket.write(bytes);
  });
}

function postBytes(route: string, body: Buffer | string, extra: string[] = []): Buffer {
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const head = [
    `POST ${route} HTTP/1.1`,
    'Host: 127.0.0.1',
    `X-Tenant-Id: ${shop.tenantId}`,
    `X-Api-Key: ${shop.apiKey}`,
    'Content-Type: application/json',
    `Content-Length: ${payload.length}`,
    'Connection: close',
    ...extra,
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`), payload]);
}

function expectContractError(answer: { status: number; body: unknown }, status: number, code: string): void {
  expectError({ ...answer, headers: new Headers() } as Response, status, code);
}

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { x: value };
  return value;
}

async function stillServing(): Promise<void> {
  expect((await call(daemon.url, 'GET', '/health')).status).toBe(200);
  expect((await call(daemon.url, 'GET', '/catalog/items?limit=1', { headers })).status).toBe(200);
}

describe('protocol-level errors in the contract shape (raw TCP)', () => {
  it('answers a malformed request line 400 BAD_REQUEST', async () => {
    expectContractError(await rawExchange('GARBAGE\r\n\r\n'), 400, 'BAD_REQUEST');
    expectContractError(await rawExchange('GET /health HTTP/7.1\r\nHost: x\r\n\r\n'), 400, 'BAD_REQUEST');
    await stillServing();
  });

  it('answers headers over 16 KiB 431 HEADERS_TOO_LARGE', async () => {
    const answer = await rawExchange(
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expectContractError(answer, 431, 'HEADERS_TOO_LARGE');
    await stillServing();
  });

  it('answers a body over 16 MiB 413 PAYLOAD_TOO_LARGE', async () => {
    const head = postBytes('/ingestion/items', '')
      .toString()
      .replace('Content-Length: 0', 'Content-Length: 17000000');
    expectContractError(await rawExchange(`${head}{"items":[`), 413, 'PAYLOAD_TOO_LARGE');
    await stillServing();
  });

  it('answers bad chunked encoding 400 BAD_REQUEST', async () => {
    const head = postBytes('/ingestion/items', '', ['Transfer-Encoding: chunked'])
      .toString()
      .replace('Content-Length: 0\r\n', '');
    expectContractError(await rawExchange(`${head}ZZ\r\nabc\r\n0\r\n\r\n`), 400, 'BAD_REQUEST');
    await stillServing();
  });

  it('answers invalid UTF-8 in a JSON body 400 INVALID_BODY, storing nothing', async () => {
    const body = Buffer.concat([
      Buffer.from('{"items":[{"externalId":"bad-'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}]}'),
    ]);
    const answer = await rawExchange(postBytes('/ingestion/items', body));
    expectContractError(answer, 400, 'INVALID_BODY');
    expect((answer.body as { message: string }).message).toContain('UTF-8');
    await stillServing();
  });

  it('answers deeply nested JSON 400 INVALID_BODY naming the limit, never 500', async () => {
    for (const levels of [300, 5000]) {
      const attributes = '{"x":'.repeat(levels) + '1' + '}'.repeat(levels);
      const body = `{"items":[{"externalId":"deep-${levels}","attributes":${attributes}}]}`;
      const answer = await rawExchange(postBytes('/ingestion/items', body));
      expectContractError(answer, 400, 'INVALID_BODY');
      expect((answer.body as { message: string }).message).toContain('64 levels');
    }
    // Under the limit is stored as sent.
    const fine = { items: [{ externalId: 'nested-ok', attributes: nested(50) }] };
    expect((await call(daemon.url, 'POST', '/ingestion/items', { headers, body: fine })).status).toBe(200);
    const stored = await call(daemon.url, 'GET', '/catalog/items/nested-ok', { headers });
    expect(stored.body.attributes).toEqual(nested(50));
    await stillServing();
  });

  it('answers a path that does not decode 400 BAD_REQUEST', async () => {
    const answer = await rawExchange(
      `GET /catalog/items/%E0%A4%A HTTP/1.1\r\nHost: x\r\nX-Tenant-Id: shop\r\nX-Api-Key: ${shop.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expectContractError(answer, 400, 'BAD_REQUEST');
  });

  it('answers a request not sent whole in time 408 REQUEST_TIMEOUT', async () => {
    const head = postBytes('/ingestion/items', '')
      .toString()
      .replace('Content-Length: 0', 'Content-Length: 100');
    // Half a body, then nothing: the 2 s request timeout ends it.
    expectContractError(await rawExchange(`${head}{"items":`), 408, 'REQUEST_TIMEOUT');
    await stillServing();
  });
});

describe('health and metrics', () => {
  it('GET /health/ready answers 200 once the state and models are loaded', async () => {
    const ready = await call(daemon.url, 'GET', '/health/ready');
    expect(ready).toMatchObject({ status: 200, body: { status: 'ready', checks: { models: 'done' } } });
  });

  it('GET /metrics takes the operator key only', async () => {
    expectError(await call(daemon.url, 'GET', '/metrics'), 401, 'UNAUTHORIZED');
    expectError(await call(daemon.url, 'GET', '/metrics', { headers }), 403, 'FORBIDDEN_SCOPE');
    const response = await fetch(`${daemon.url}/metrics`, { headers: { 'x-api-key': OPERATOR_KEY } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(
      /nextrec_http_request_duration_seconds_count\{route="\/health",method="GET",status_class="2xx"\} \d+/,
    );
    expect(text).toContain('nextrec_write_queue_records');
    expect(text).toMatch(/^nextrec_interactions_log_rows \d+$/m);
    expect(text).toContain('nextrec_result_cache_hit_ratio');
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('serves the same metrics without credentials on the metrics port', async () => {
    const url = /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"metrics listening"/.exec(daemon.output())?.[1];
    expect(url).toBeDefined();
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('nextrec_write_commit_duration_seconds_count');
    const other = await fetch(`${url}/tenants`);
    expectError({ status: other.status, body: await other.json(), headers: other.headers }, 404, 'NOT_FOUND');
  });
});

describe('a bounded write queue', () => {
  it('answers 503 OVERLOADED with Retry-After when full, and keeps every acknowledged write', async () => {
    const acknowledged: string[] = [];
    const refused: string[] = [];
    // One record fits the queue: requests arriving while another is committed are refused. Concurrent
    // requests overlap within a few rounds at most.
    for (let round = 0; round < 10 && refused.length === 0; round++) {
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const eventId = `r${round}-e${i}`;
          const response = await call(daemon.url, 'POST', '/ingestion/interactions', {
            headers,
            body: { interactions: [{ userId: 'loaded', itemId: `i${i}`, type: 'view', eventId }] },
          });
          if (response.status === 200) acknowledged.push(eventId);
          else {
            expectError(response, 503, 'OVERLOADED');
            expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
            refused.push(eventId);
          }
        }),
      );
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(acknowledged.length).toBeGreaterThan(0);

    // Every acknowledged write is in the store, after a restart; no refused one is.
    const { dataDir } = daemon;
    expect(await daemon.stop()).toBe(0);
    const rows = await queryStore(dataDir, `SELECT event_id FROM interactions WHERE user_id = 'loaded'`);
    expect(rows.map((row) => String(row.event_id)).sort()).toEqual([...acknowledged].sort());
    daemon = await startDaemonProcess({ dataDir, args: ARGS });
    const exported = await call(daemon.url, 'GET', '/users/loaded/export', { headers });
    expect(exported.status).toBe(200);
    const eventIds = (exported.body.interactions as { eventId: string }[]).map((event) => event.eventId);
    expect(eventIds.sort()).toEqual([...acknowledged].sort());
    port = Number(new URL(daemon.url).port);
  });
});
