import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { DAEMON_FILE } from '../daemon.js';
import { openRuntime, type Runtime, type RuntimeOptions } from '../runtime.js';
import { operatorKey } from '../tenants/secrets.js';
import type { StorePlace } from './flags.js';

interface DaemonAddress {
  pid: number;
  host: string;
  port: number;
}

function runningDaemon(dataDir: string): DaemonAddress | undefined {
  const file = path.join(dataDir, DAEMON_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const address = JSON.parse(readFileSync(file, 'utf8')) as DaemonAddress;
    process.kill(address.pid, 0);
    return address;
  } catch {
    return undefined;
  }
}

export interface OperatorCall<T> {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
  /** The same operation on the store, when no daemon holds it. */
  direct: (runtime: Runtime) => Promise<T>;
  /** How to open the store for `direct`. */
  runtime?: RuntimeOptions;
  /** How long to wait for the daemon's answer (ms, 0: as long as it takes); undici's default otherwise. */
  timeoutMs?: number;
  /** While the daemon works on the call: GET `path` every `everyMs` and hand each answer to `seen`. */
  poll?: { path: string; everyMs: number; seen: (answer: unknown) => void };
}

/**
 * A daemon running on this data dir is asked over HTTP with the operator key (on the DuckDB store it is
 * the only writer); when none runs, the store is opened here.
 */
export async function operatorCall<T>(place: StorePlace, call: OperatorCall<T>): Promise<T> {
  const { dataDir } = place;
  const daemon = runningDaemon(dataDir);
  if (!daemon) {
    const runtime = await openRuntime(dataDir, undefined, undefined, {
      ...call.runtime,
      storeUrl: place.storeUrl,
    });
    try {
      return await call.direct(runtime);
    } finally {
      await runtime.store.close();
    }
  }
  const host = daemon.host === '0.0.0.0' || daemon.host === '::' ? '127.0.0.1' : daemon.host;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${daemon.port}`;
  const key = operatorKey(dataDir).value;
  const send = async <R>(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<R> => {
    const response = await request(`${origin}${path}`, {
      method,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const payload = (await response.body.json()) as R & { message?: string };
    if (response.statusCode >= 400)
      throw new Error(payload.message ?? `daemon answered ${response.statusCode}`);
    return payload;
  };
  const { poll } = call;
  const timer = poll
    ? setInterval(() => {
        send('GET', poll.path).then(poll.seen, () => undefined);
      }, poll.everyMs)
    : undefined;
  try {
    return await send<T>(call.method, call.path, call.body, call.timeoutMs);
  } finally {
    clearInterval(timer);
  }
}
