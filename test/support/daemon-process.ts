import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { PATIENCE_MS } from './eventually.js';
import { checkAgainstDocument } from './openapi-check.js';
import { storeArgs } from './test-store.js';
import { signRequest } from '../../src/client/index.js';
import { PROCESS_V8_FLAGS } from '../../src/state/memory.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/run.js');
export const OPERATOR_KEY = 'test-operator-key-0123456789';

export interface DaemonProcess {
  url: string;
  dataDir: string;
  process: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no shutdown work at all. */
  kill(): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'nextrec-test-'));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts `nextrec serve` as a real process on a free port of 127.0.0.1, by default as bin/run.js's first
 * line starts it: `launch: 'bin'` runs bin/run.js itself, `'plain node'` runs it with no flag for node.
 */
export async function startDaemonProcess(
  options: {
    dataDir?: string;
    args?: string[];
    env?: Record<string, string>;
    launch?: 'node with its flags' | 'bin' | 'plain node';
    /** The API's port (default: any free one). */
    port?: number;
  } = {},
): Promise<DaemonProcess> {
  const dataDir = options.dataDir ?? tempDataDir();
  const given = options.args ?? [];
  const store = given.includes('--store') ? [] : await storeArgs(dataDir);
  const serve = ['serve', '--port', String(options.port ?? 0), '--data-dir', dataDir, ...store, ...given];
  const [command, ...args] = {
    'node with its flags': [process.execPath, ...PROCESS_V8_FLAGS, BIN, ...serve],
    bin: [BIN, ...serve],
    'plain node': [process.execPath, BIN, ...serve],
  }[options.launch ?? 'node with its flags'];
  const child = spawn(command, args, {
    env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY, NEXTREC_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${output}`)), PATIENCE_MS);
    const check = () => {
      const match = /nextrec listening on (http:\/\/[^\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`daemon exited:\n${output}`));
    });
  });
  return {
    url,
    dataDir,
    process: child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * The daemons a test file starts, each on a data dir of its own unless given one. `stopAll` (for
 * afterAll) stops those still running, a failed test's too, then removes the data dirs it made.
 */
export function daemonsOfFile(): {
  start(dataDir?: string): Promise<DaemonProcess>;
  stopAll(): Promise<void>;
} {
  const daemons: DaemonProcess[] = [];
  const dirs: string[] = [];
  return {
    async start(dataDir) {
      const daemon = await startDaemonProcess({ dataDir });
      daemons.push(daemon);
      if (!dataDir) dirs.push(daemon.dataDir);
      return daemon;
    },
    async stopAll() {
      await Promise.all(daemons.map((daemon) => daemon.stop()));
      dirs.forEach(removeDataDir);
    },
  };
}

export interface Response<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

/** A small JSON client over fetch; `raw` sends a body as-is (for malformed input). */
export async function call<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  base: string,
  method: string,
  route: string,
  options: { headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<Response<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${base}${route}`, { method, headers, body });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.startsWith('application/json') ?? text !== '';
  const parsed = text && isJson ? JSON.parse(text) : text || undefined;
  await checkAgainstDocument(base, method, route, response.status, parsed);
  return { status: response.status, body: parsed, headers: response.headers };
}

export interface TenantCredentials {
  tenantId: string;
  apiKey: string;
  privateToken: string;
  publicToken: string;
}

export async function createTenant(base: string, tenantId: string): Promise<TenantCredentials> {
  const response = await call<TenantCredentials>(base, 'POST', '/tenants', {
    headers: { 'x-api-key': OPERATOR_KEY },
    body: { tenantId },
  });
  if (response.status !== 201) throw new Error(`tenant creation failed: ${JSON.stringify(response.body)}`);
  return response.body;
}

export interface SignedCallOptions {
  /** `private` (the default) or `public`: which token signs. */
  token?: 'private' | 'public';
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  /** Unix seconds (default: now). */
  timestamp?: number;
}

/** A request signed with a tenant's private or public token through the package's signing helper. */
export async function signedCall<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  base: string,
  method: string,
  route: string,
  credentials: TenantCredentials,
  options: SignedCallOptions = {},
): Promise<Response<T>> {
  const kind = options.token ?? 'private';
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const signed = await signRequest({
    method,
    url: route,
    token: kind === 'public' ? credentials.publicToken : credentials.privateToken,
    publicToken: kind === 'public',
    body,
    timestamp: options.timestamp,
  });
  return call<T>(base, method, signed.url, {
    headers: { 'x-tenant-id': credentials.tenantId, ...signed.headers, ...options.headers },
    raw: body,
  });
}

export function tenantHeaders(credentials: TenantCredentials): Record<string, string> {
  return { 'x-tenant-id': credentials.tenantId, 'x-api-key': credentials.apiKey };
}

/** Asserts the contract's error body with this status and code. */
export function expectError(response: Response, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.body).toMatchObject({
    statusCode: status,
    code,
    error: expect.any(String),
    message: expect.any(String),
  });
}

/**
 * Announces a POST body of `contentLength` bytes and sends only its headers: a server that enforces a
 * body limit answers from the Content-Length alone. Resolves with that answer.
 */
export function postAnnouncingLength(
  base: string,
  route: string,
  headers: Record<string, string>,
  contentLength: number,
): Promise<Response> {
  const url = new URL(route, base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let raw = '';
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body] = raw.split('\r\n\r\n');
      const status = Number(head.split(' ')[1]);
      resolve({ status, body: body ? JSON.parse(body) : undefined, headers: new Headers() });
    });
    const lines = [
      `POST ${url.pathname} HTTP/1.1`,
      `Host: ${url.host}`,
      'Content-Type: application/json',
      `Content-Length: ${contentLength}`,
      'Connection: close',
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n{"items":[`);
  });
}
