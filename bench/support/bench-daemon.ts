import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROCESS_V8_FLAGS } from '../../src/state/memory.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { postJson } from './shop-loader.js';

export const BIN = fileURLToPath(new URL('../../../bin/run.js', import.meta.url));

/**
 * node's arguments for `nextrec serve <serveFlags>` as `nextrec` itself starts it (the V8 flags of
 * bin/run.js's first line), with `nodeFlags` (a profiler's, say) beside those.
 */
export function serveCommand(serveFlags: string[], nodeFlags: string[] = []): string[] {
  return [...PROCESS_V8_FLAGS, ...nodeFlags, BIN, 'serve', ...serveFlags];
}

export const OPERATOR_KEY = 'bench-operator-key-0123456789';

/** A tenant's credentials, as `POST /tenants` answers them. */
export interface BenchCredentials {
  tenantId: string;
  apiKey: string;
  privateToken: string;
  publicToken: string;
}

export interface BenchDaemon {
  daemon: ChildServer;
  /** Its data dir, removed by `stop`. */
  dataDir: string;
  /** The `bench` tenant, created on start. */
  credentials: BenchCredentials;
  /** X-Tenant-Id and X-Api-Key of the `bench` tenant. */
  headers: Record<string, string>;
  /** Stops the daemon and removes its data dir. */
  stop(): Promise<void>;
}

/** What a benchmark changes of its daemon's command line. */
export interface DaemonFlags {
  /** `warn` unless given. */
  logLevel?: string;
  /** node's, beside those of serveCommand. */
  nodeFlags?: string[];
}

/**
 * A daemon in a process of its own on a fresh data dir (`name` names the dir), with a `bench` tenant;
 * `env` adds to its environment.
 */
export async function startBenchDaemon(
  name: string,
  env: Record<string, string> = {},
  { logLevel = 'warn', nodeFlags = [] }: DaemonFlags = {},
): Promise<BenchDaemon> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `nextrec-bench-${name}-`));
  const remove = () => rmSync(dataDir, { recursive: true, force: true });
  const daemon = await startChildServer(
    'daemon',
    serveCommand(['--port', '0', '--data-dir', dataDir, '--log-level', logLevel], nodeFlags),
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: OPERATOR_KEY, ...env },
  ).catch((error: unknown) => {
    remove();
    throw error;
  });
  const stop = async () => {
    await daemon.stop();
    remove();
  };
  try {
    const credentials = (await postJson(
      `${daemon.url}/tenants`,
      { 'x-api-key': OPERATOR_KEY },
      { tenantId: 'bench' },
      201,
    )) as BenchCredentials;
    const headers = { 'x-tenant-id': 'bench', 'x-api-key': credentials.apiKey };
    return { daemon, dataDir, credentials, headers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
