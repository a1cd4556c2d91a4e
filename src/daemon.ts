import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { LocalRanker, type Ranker } from './engine/ranker.js';
import { TurnQueue } from './engine/turn-queue.js';
import { WorkerRanker } from './engine/worker-ranker.js';
import { ThreadPreparer } from './models/model-loader.js';
import { closeRuntime, followWrites, loadBuilt, openRuntime, type Runtime } from './runtime.js';
import { buildApp } from './server/app.js';
import { buildEmbeddingsApp } from './server/embeddings-app.js';
import { operatorKey } from './tenants/secrets.js';
import { openEmbedder } from './vector/embedders.js';

export interface DaemonOptions {
  dataDir: string;
  host: string;
  port: number;
  logLevel?: string;
  /** Rank in a worker thread (WorkerRanker) rather than in the event-loop thread. */
  rankingThread: boolean;
  /** A local transformers model directory to embed with; none: the built-in hashing embedder. */
  modelDir?: string;
  /** The embeddings helper's port (default: `port` + 1, or any free port when `port` is 0); null: none. */
  embeddingsPort?: number | null;
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

async function startServing(
  options: DaemonOptions,
  ranker: Ranker,
  rankingThread: WorkerRanker | undefined,
): Promise<Daemon> {
  const embedder = await openEmbedder(options.modelDir);
  const runtime = await openRuntime(options.dataDir, ranker.changes, new ThreadPreparer(), {
    embedder,
    modelDir: options.modelDir,
  });
  const key = operatorKey(options.dataDir);
  if (key.generatedFile) {
    options.announce?.(`operator key (also in ${key.generatedFile}, shown once): ${key.value}`);
  }
  const app = await buildApp({ runtime, ranker, operatorKey: key.value, logLevel: options.logLevel });
  rankingThread?.whenFailed((error) =>
    app.log.error({ err: error }, 'ranking thread failed; ranking goes on in the event-loop thread'),
  );
  await options.beforeListen?.(runtime, app);
  // Models already built serve from the first request on.
  await loadBuilt(runtime, app.log);
  const address = await app.listen({ host: options.host, port: options.port });
  const embeddingsPort =
    options.embeddingsPort === undefined
      ? options.port === 0
        ? 0
        : options.port + 1
      : options.embeddingsPort;
  const embeddings =
    embeddingsPort === null ? undefined : await buildEmbeddingsApp(runtime, key.value, options.logLevel);
  const embeddingsUrl = await embeddings?.listen({ host: options.host, port: embeddingsPort ?? 0 });
  const daemonFile = path.join(options.dataDir, DAEMON_FILE);
  const port = (app.server.address() as { port: number }).port;
  writeFileSync(daemonFile, JSON.stringify({ pid: process.pid, host: options.host, port }));
  followWrites(runtime, app.log);
  let stopping: Promise<void> | undefined;
  return {
    app,
    runtime,
    url: address,
    embeddingsUrl,
    stop() {
      // Stop accepting, let in-flight requests (and so their writes) finish, then close the store.
      stopping ??= (async () => {
        await app.close();
        await embeddings?.close();
        await closeRuntime(runtime, () => ranker.close());
        rmSync(daemonFile, { force: true });
      })();
      return stopping;
    },
  };
}
