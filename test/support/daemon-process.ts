import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

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

/** Starts `nextrec serve` as a real process on a free port of 127.0.0.1. */
export async function startDaemonProcess(
  options: { dataDir?: string; args?: string[]; env?: Record<string, string> } = {},
): Promise<DaemonProcess> {
  const dataDir = options.dataDir ?? tempDataDir();
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])],
    {
      env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY, NEXTREC_LOG_LEVEL: 'info', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not start:\n${output}`)), 30_000);
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
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
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
 * Posts a body the server may answer before reading it all (a 413 on Content-Length): the answer is
 * taken as soon as it arrives, and the broken pipe of the rest of the upload is expected.
 */
export function postEarlyAnswered(
  base: string,
  route: string,
  headers: Record<string, string>,
  body: string,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}${route}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text), headers: new Headers() }),
      );
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    });
    request.end(body);
  });
}
