import { availableParallelism } from 'node:os';
import { Command, Flags } from '@oclif/core';
import { feedPrivateNetworksFlag, modelDirFlag, logLevelFlag, storeFlag } from './flags.js';
import { stopOnSignals } from './stop-on-signals.js';
import { demoInstructions, seedDemoTenant } from '../demo.js';
import { StartError, startDaemon } from '../daemon.js';
import { missingProcessFlags } from '../state/memory.js';
import { checkStoreUrl, storeAddress, StoreUrlError } from '../store/open-store.js';
import {
  DEFAULT_DUCKDB_MEMORY_LIMIT,
  defaultDuckDbThreads,
  memoryLimitOf,
} from '../store/duckdb-settings.js';
import {
  DEFAULT_REQUEST_TIMEOUT_S,
  DEFAULT_WRITE_QUEUE_LIMIT,
  serverOptions,
  type ServerOptions,
} from '../server/options.js';

export default class Serve extends Command {
  static override summary = 'Start the daemon: the HTTP API on the store in the data dir';
  static override description =
    'Serves the HTTP API on --port and the embeddings helper on --embeddings-port (unless --no-embeddings), and prints "nextrec listening on <url>" once it listens. SIGTERM or Ctrl-C stops it gracefully: it takes no new requests, lets those in flight finish and closes the store.';
  static override examples = [
    '<%= config.bin %> serve --port 8080 --data-dir ./data',
    '<%= config.bin %> serve --demo   # what npm start runs',
  ];
  static override flags = {
    port: Flags.integer({ description: 'port to listen on', env: 'NEXTREC_PORT', default: 8080, min: 0 }),
    host: Flags.string({ description: 'address to bind', env: 'NEXTREC_HOST', default: '127.0.0.1' }),
    'data-dir': Flags.string({
      description: 'where the store lives',
      env: 'NEXTREC_DATA_DIR',
      default: './data',
    }),
    store: storeFlag,
    demo: Flags.boolean({
      description: 'create a demo tenant with a generated shop when the store has no tenant',
    }),
    'ranking-thread': Flags.boolean({
      description:
        'rank recommendations in a worker thread, beside the one serving HTTP (default: when the machine has more than one core)',
      env: 'NEXTREC_RANKING_THREAD',
      allowNo: true,
    }),
    embeddings: Flags.boolean({
      description: 'serve the embeddings helper beside the API (--no-embeddings: not at all)',
      env: 'NEXTREC_EMBEDDINGS',
      allowNo: true,
      default: true,
    }),
    'embeddings-port': Flags.integer({
      description: 'port of the embeddings helper service (default: --port + 1)',
      env: 'NEXTREC_EMBEDDINGS_PORT',
      min: 0,
    }),
    'model-dir': modelDirFlag,
    'log-level': logLevelFlag,
    'feed-private-networks': feedPrivateNetworksFlag,
    'request-timeout': Flags.integer({
      description: 'seconds a client has to send a whole request, headers and body (0: no limit)',
      env: 'NEXTREC_REQUEST_TIMEOUT',
      default: DEFAULT_REQUEST_TIMEOUT_S,
      min: 0,
    }),
    'write-queue-limit': Flags.integer({
      description:
        'ingestion records waiting to be committed before ingestion answers 503 OVERLOADED (and 20 times as many interactions waiting in the log to be moved into the store)',
      env: 'NEXTREC_WRITE_QUEUE_LIMIT',
      default: DEFAULT_WRITE_QUEUE_LIMIT,
      min: 1,
    }),
    'duckdb-memory-limit': Flags.string({
      description: "memory the store's DuckDB may take, its page cache and its queries' (256MB, 1GB, ...)",
      env: 'NEXTREC_DUCKDB_MEMORY_LIMIT',
      default: DEFAULT_DUCKDB_MEMORY_LIMIT,
      parse: async (input) => memoryLimitOf(input),
    }),
    'duckdb-threads': Flags.integer({
      description: "threads a query of the store's DuckDB may run on (default: 2, or 1 on one core)",
      env: 'NEXTREC_DUCKDB_THREADS',
      min: 1,
    }),
    'spare-cpu': Flags.boolean({
      description:
        'keep model builds and loads off one CPU, at the lowest scheduling priority (SCHED_IDLE), so that serving keeps its caches and CPUs while they run; they take longer (default: when the machine has more than one core)',
      env: 'NEXTREC_SPARE_CPU',
      allowNo: true,
    }),
    'warm-up': Flags.boolean({
      description:
        'before reporting ready, send ranking requests for the largest tenants through the routes, so that the first requests of clients find its code compiled (--no-warm-up: ready as soon as the models are loaded)',
      env: 'NEXTREC_WARM_UP',
      allowNo: true,
      default: true,
    }),
    'rate-limit-redis': Flags.string({
      description:
        'count rate limits in this Redis (redis://[user:password@]host[:port][/db]) together with every daemon given the same one (default: each daemon counts alone)',
      env: 'NEXTREC_RATE_LIMIT_REDIS',
    }),
    'metrics-port': Flags.integer({
      description: 'also serve GET /metrics without credentials on this port of --host (default: off)',
      env: 'NEXTREC_METRICS_PORT',
      min: 0,
      max: 65535,
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    let demo: Awaited<ReturnType<typeof seedDemoTenant>>;
    let server: ServerOptions;
    try {
      server = serverOptions({
        requestTimeoutS: flags['request-timeout'],
        writeQueueLimit: flags['write-queue-limit'],
        metricsPort: flags['metrics-port'],
        rateLimitRedis: flags['rate-limit-redis'],
      });
      if (flags.store !== undefined) checkStoreUrl(flags.store);
    } catch (error) {
      if (error instanceof RangeError || error instanceof StoreUrlError)
        this.error(error.message, { exit: 2 });
      throw error;
    }
    const daemon = await startDaemon({
      dataDir: flags['data-dir'],
      storeUrl: flags.store,
      host: flags.host,
      port: flags.port,
      logLevel: flags['log-level'],
      rankingThread: flags['ranking-thread'] ?? availableParallelism() > 1,
      modelDir: flags['model-dir'],
      embeddingsPort: flags.embeddings ? flags['embeddings-port'] : null,
      feedPrivateNetworks: flags['feed-private-networks'],
      duckdb: {
        memoryLimit: flags['duckdb-memory-limit'],
        threads: flags['duckdb-threads'] ?? defaultDuckDbThreads(),
      },
      spareCpu: flags['spare-cpu'],
      warmUp: flags['warm-up'],
      server,
      announce: (line) => this.log(line),
      beforeListen: async (runtime) => {
        if (flags.demo) demo = await seedDemoTenant(runtime);
      },
    }).catch((error: unknown) => {
      // What to do, without a stack: the data dir in use, the port taken (README.md, "The CLI").
      if (error instanceof StartError) this.error(error.message, { exit: 1 });
      throw error;
    });
    // Before the lines that say it listens: a signal sent once they are out stops it gracefully.
    stopOnSignals(() => daemon.stop(), daemon.app.log);
    // The helper's line first: whoever waits for the daemon's line has both.
    if (daemon.embeddingsUrl) this.log(`embeddings helper listening on ${daemon.embeddingsUrl}`);
    const missing = missingProcessFlags();
    if (missing.length > 0)
      daemon.app.log.warn(
        { missing },
        'started without the V8 flags of `nextrec serve`: the event loop collects its garbage with every V8 helper thread, which slows answers on a machine of few cores (docs/memory.md)',
      );
    const store =
      flags.store === undefined ? '' : `, store PostgreSQL at ${storeAddress(checkStoreUrl(flags.store))}`;
    this.log(`nextrec listening on ${daemon.url} (data dir ${flags['data-dir']}${store})`);
    if (demo) {
      const firstItem = daemon.runtime.state.get(demo.tenantId)?.catalog.externalIds[0] ?? 'sku-000001';
      this.log(demoInstructions(demo, daemon.url, firstItem));
    }
  }
}
