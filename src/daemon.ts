import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { LocalRanker, type Ranker } from './engine/ranker.js';
import { TurnQueue } from './engine/turn-queue.js';
import { WorkerRanker } from './engine/worker-ranker.js';
import { followChanges } from './following/follow-changes.js';
import { loadingThreads } from './models/model-loader.js';
import { closeRuntime, followWrites, loadBuilt, openRuntime, type Runtime } from './runtime.js';
import { buildApp } from './server/app.js';
import { connectRateLimitRedis } from './server/rate-limit-redis.js';
import { buildEmbeddingsApp } from './server/embeddings-app.js';
import type { ServerOptions } from './server/options.js';
import { feedNetwork } from './feeds/network.js';
import { IdleCollector, followRequests } from './server/idle-collector.js';
import { warmUp } from './server/warm-up.js';
import { tuneV8ForServing } from './state/memory.js';
import { StoreInUseError } from './store/database.js';
import type { DuckDbSettings } from './store/duckdb-settings.js';
import { StoreUrlError } from './store/open-store.js';
import { operatorKey, type OperatorKey } from './tenants/secrets.js';
import { openEmbedder } from './vector/embedders.js';

export interface DaemonOptions {
  dataDir: string;
  /** `postgres://...`: PostgreSQL is the store of record, which other daemons may share (docs/scaling.md). */
  storeUrl?: string;
  host: string;
  port: number;
  logLevel?: string;
  /** Rank in a worker thread (WorkerRanker) rather than in the event-loop thread. */
  rankingThread: boolean;
  /** A local transformers model directory to embed with; none: the built-in hashing embedder. */
  modelDir?: string;
  /** Feeds may fetch from loopback and private addresses (docs/guide.md, "Catalog feeds"). */
  feedPrivateNetworks?: boolean;
  /** The embeddings helper's port (default: `port` + 1, or any free port when `port` is 0); null: none. */
  embeddingsPort?: number | null;
  /** Timeouts, the write queue's bound, the metrics port (default: serverOptions()). */
  server?: ServerOptions;
  /** The store's DuckDB limits (default: from the environment, docs/memory.md). */
  duckdb?: DuckDbSettings;
  /** Model builds and loads keep off one CPU (docs/batch-models.md; default: when there are several). */
  spareCpu?: boolean;
  /** Warm ranking up before reporting ready (docs/configuration.md, "Health and metrics"; default: true). */
  warmUp?: boolean;
  /** Runs once the store is open and before the port opens (the demo tenant is created here). */
  beforeListen?: (runtime: Runtime, app: FastifyInstance) => Promise<void>;
  /** Where to say things a person starting the daemon must see once (generated operator key). */
  announce?: (line: string) => void;
}

export interface Daemon {
  app: FastifyInstance;
  runtime: Runtime;
  url: string;
  /** The embeddings helper service, when it runs. */
  embeddingsUrl?: string;
  stop(): Promise<void>;
}

/** Where CLI commands find a running daemon for the same data dir. */
export const DAEMON_FILE = 'daemon.json';

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  tuneV8ForServing();
  const rankingThread = options.rankingThread ? new WorkerRanker() : undefined;
  const ranker: Ranker = rankingThread ?? new LocalRanker(new TurnQueue());
  try {
    return await startServing(options, ranker, rankingThread);
  } catch (error) {
    // A running thread would keep the process alive after a failed start.
    await ranker.close();
    throw error;
  }
}

/** Why a daemon could not start, said so that a person knows what to do (README.md, "The CLI"). */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartError';
  }
}

/** A store in use, told as the daemon holding it (per its DAEMON_FILE) when that is who holds it. */
function storeInUse(error: StoreInUseError): StartError {
  let holder = 'process';
  try {
    const running = JSON.parse(readFileSync(path.join(error.dataDir, DAEMON_FILE), 'utf8')) as {
      pid?: number;
    };
    if (running.pid === error.pid) holder = 'daemon';
  } catch {
    // No daemon file: a command holds the store.
  }
  return new StartError(
    `another nextrec ${holder} (pid ${error.pid ?? 'unknown'}) is using ${error.dataDir}; ` +
      'stop it, or start this one with another --data-dir (NEXTREC_DATA_DIR)',
  );
}

/** Listens, or says which flag chooses another port when this one is taken (`embeddings serve` too). */
export async function listenOn(
  app: FastifyInstance,
  host: string,
  port: number,
  flag: string,
): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new StartError(`port ${port} on ${host} is already in use; choose another with ${flag}`);
    if (code === 'EADDRNOTAVAIL')
      throw new StartError(
        `cannot bind ${host}: no such address here; choose another with --host (NEXTREC_HOST)`,
      );
    if (code === 'EACCES')
      throw new StartError(`port ${port} needs privileges; choose one above 1023 with ${flag}`);
    throw error;
  }
}

async function startServing(
  options: DaemonOptions,
  ranker: Ranker,
  rankingThread: WorkerRanker | undefined,
): Promise<Daemon> {
  // Before the store's state loads (minutes for a large one), so that a Redis out of reach fails at once.
  const redisUrl = options.server?.rateLimitRedis;
  const rateLimitRedis =
    redisUrl === undefined
      ? undefined
      : await connectRateLimitRedis(redisUrl).catch((error: unknown) => {
          throw new StartError((error as Error).message);
        });
  const embedder = await openEmbedder(options.modelDir);
  const runtime = await openRuntime(options.dataDir, ranker.changes, loadingThreads(), {
    embedder,
    storeUrl: options.storeUrl,
    modelDir: options.modelDir,
    feedNetwork: feedNetwork(options.feedPrivateNetworks ?? false),
    duckdb: options.duckdb,
    spareCpu: options.spareCpu,
  }).catch((error: unknown) => {
    rateLimitRedis?.disconnect();
    if (error instanceof StoreUrlError) throw new StartError(error.message);
    throw error instanceof StoreInUseError ? storeInUse(error) : error;
  });
  const key = operatorKey(options.dataDir);
  let app: FastifyInstance | undefined;
  let embeddings: FastifyInstance | undefined;
  let embeddingsUrl: string | undefined;
  try {
    app = await buildApp({
      runtime,
      ranker,
      operatorKey: key.value,
      logLevel: options.logLevel,
      server: options.server,
      host: options.host,
      rateLimitRedis,
    });
    const log = app.log;
    const caughtUp = followOtherDaemons(app, runtime);
    rankingThread?.whenFailed((error) =>
      log.error({ err: error }, 'ranking thread failed; ranking goes on in the event-loop thread'),
    );
    await options.beforeListen?.(runtime, app);
    // The port opens before the built models load: GET /health answers, while /health/ready and every
    // other route answer 503 NOT_READY until they are loaded, so models already built serve from the
    // first answered request on.
    const address = await listenOn(app, options.host, options.port, '--port (NEXTREC_PORT)');
    await loadBuilt(runtime, app.log);
    app.readiness.done('models');
    if (options.warmUp ?? true) await warmUpBeforeReady(app, ranker);
    app.readiness.done('warmup');
    // Said to listen once ready: from a store other daemons share, once caught up with their writes.
    await caughtUp;
    const embeddingsPort =
      options.embeddingsPort === undefined
        ? options.port === 0
          ? 0
          : options.port + 1
        : options.embeddingsPort;
    if (embeddingsPort !== null) {
      embeddings = await buildEmbeddingsApp(runtime, key.value, options.logLevel);
      embeddingsUrl = await listenOn(
        embeddings,
        options.host,
        embeddingsPort,
        '--embeddings-port (NEXTREC_EMBEDDINGS_PORT)',
      );
    }
    const shown = generatedKeyLine(key);
    if (shown) options.announce?.(shown);
    return serving(options, runtime, ranker, { app, url: address }, { app: embeddings, url: embeddingsUrl });
  } catch (error) {
    await abandonStart(runtime, key, [app, embeddings]);
    // The app quits it when it closes; one that failed before it took the client leaves it here.
    rateLimitRedis?.disconnect();
    throw error;
  }
}

/** How long a daemon that could not tell whether it caught up waits before it asks again. */
const CATCH_UP_RETRY_MS = 1000;

/**
 * From a store other daemons share: their writes are followed into the serving state from where it was
 * loaded, and the state counts as ready once it caught up with every change committed by then
 * (src/following/). Deletions they make leave this daemon's answer cache and remembered bodies too.
 * Resolves once caught up (at once for a store no other daemon shares).
 */
function followOtherDaemons(app: FastifyInstance, runtime: Runtime): Promise<void> {
  const feed = followChanges(runtime, app.staleAnswers, (error) =>
    app.log.error({ err: error }, "following the other daemons' writes failed; trying again"),
  );
  if (!feed) return Promise.resolve();
  return new Promise((resolve) => {
    const catchUp = (): void => {
      feed.caughtUp().then(
        () => {
          app.readiness.done('state');
          resolve();
        },
        (error: unknown) => {
          app.log.error({ err: error }, "could not read how far the other daemons' writes are; trying again");
          setTimeout(catchUp, CATCH_UP_RETRY_MS).unref();
        },
      );
    };
    catchUp();
  });
}

/**
 * Ranking's code compiled and what it keeps built before the first client's request (docs/configuration.md, "Health and metrics"). A warm-up that fails leaves the daemon to serve cold, as it would without one.
 */
async function warmUpBeforeReady(app: FastifyInstance, ranker: Ranker): Promise<void> {
  try {
    app.log.info(await warmUp(app, ranker), 'ranking warmed up');
  } catch (error) {
    app.log.warn({ err: error }, 'the warm-up failed; the first requests are ranked cold');
  }
}

/**
 * The line that shows an operator key generated for this run, said only once the process listens: a
 * run that failed shows no key it did not keep. Undefined for a key that was there already.
 */
export function generatedKeyLine(key: OperatorKey): string | undefined {
  return key.generatedFile && `operator key (also in ${key.generatedFile}, shown once): ${key.value}`;
}

/**
 * Undoes a start that failed before it listened (the daemon's, or the embeddings helper's alone): its
 * apps and the store closed, and a key generated for it removed, to be generated again, and shown, by
 * the next run.
 */
export async function abandonStart(
  runtime: Runtime,
  key: OperatorKey,
  apps: (FastifyInstance | undefined)[],
): Promise<void> {
  for (const app of apps) await app?.close();
  await closeRuntime(runtime);
  if (key.generatedFile) rmSync(key.generatedFile, { force: true });
}

/** The daemon once it listens: its daemon file written, following writes, and how it stops. */
function serving(
  options: DaemonOptions,
  runtime: Runtime,
  ranker: Ranker,
  { app, url }: { app: FastifyInstance; url: string },
  helper: { app?: FastifyInstance; url?: string },
): Daemon {
  const daemonFile = path.join(options.dataDir, DAEMON_FILE);
  const port = (app.server.address() as { port: number }).port;
  writeFileSync(daemonFile, JSON.stringify({ pid: process.pid, host: options.host, port }));
  followWrites(runtime, app.log);
  const collector = new IdleCollector({
    alsoCollect: () => {
      ranker.collectGarbage?.();
      runtime.store
        .releaseCache()
        .catch((error: unknown) =>
          app.log.error({ err: error }, "could not give back DuckDB's cached pages"),
        );
    },
  });
  followRequests(app.server, collector);
  collector.start();
  let stopping: Promise<void> | undefined;
  return {
    app,
    runtime,
    url,
    embeddingsUrl: helper.url,
    stop() {
      // Stop accepting, let in-flight requests (and so their writes) finish, then close the store.
      stopping ??= (async () => {
        collector.stop();
        await app.close();
        await helper.app?.close();
        await closeRuntime(runtime, () => ranker.close());
        rmSync(daemonFile, { force: true });
      })();
      return stopping;
    },
  };
}
