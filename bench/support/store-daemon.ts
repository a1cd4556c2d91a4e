import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { OPERATOR_KEY, serveCommand, type BenchCredentials } from './bench-daemon.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { postJson } from './shop-loader.js';

/** Where a daemon's store is: PostgreSQL's database at `url`, or the DuckDB file of its data dir. */
export type StoreOf = { kind: 'postgres'; url: string } | { kind: 'duckdb' };

export interface StoreDaemon {
  server: ChildServer;
  /** The port of its embeddings helper, for haproxy's second frontend. */
  embeddingsPort: number;
  /** Seconds from its start to its first 200 on `/health/ready`. */
  readySeconds: number;
}

/**
 * `nextrec serve` on `dataDir` and the store given, on free ports, with OPERATOR_KEY as the operator
 * key; resolves once it answers `/health/ready` with 200. PostgreSQL's URL, which holds its password,
 * goes in the environment (NEXTREC_STORE_URL), as `npm run cluster` passes it.
 */
export async function startStoreDaemon(dataDir: string, store: StoreOf): Promise<StoreDaemon> {
  const started = performance.now();
  const server = await startChildServer(
    `daemon on ${store.kind}`,
    serveCommand(['--port', '0', '--data-dir', dataDir, '--log-level', 'warn']),
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: OPERATOR_KEY, ...(store.kind === 'postgres' && { NEXTREC_STORE_URL: store.url }) },
  );
  try {
    await waitUntilReady(server.url);
    const readySeconds = (performance.now() - started) / 1000;
    // Printed before the daemon's own line, which startChildServer waited for.
    const helper = /embeddings helper listening on (http:\/\/\S+)/.exec(server.output());
    if (!helper)
      throw new Error(`the daemon did not say where its embeddings helper listens:\n${server.output()}`);
    return { server, embeddingsPort: Number(new URL(helper[1]).port), readySeconds };
  } catch (error) {
    await server.stop().catch(() => undefined);
    throw error;
  }
}

/** Polls `/health/ready` every 20 ms until it answers 200. */
async function waitUntilReady(url: string): Promise<void> {
  for (;;) {
    const response = await request(`${url}/health/ready`);
    await response.body.dump();
    if (response.statusCode === 200) return;
    await sleep(20);
  }
}

/** Creates the `bench` tenant; returns its X-Tenant-Id and X-Api-Key headers. */
export async function createBenchTenant(url: string): Promise<Record<string, string>> {
  const created = (await postJson(
    `${url}/tenants`,
    { 'x-api-key': OPERATOR_KEY },
    { tenantId: 'bench' },
    201,
  )) as BenchCredentials;
  return { 'x-tenant-id': 'bench', 'x-api-key': created.apiKey };
}
