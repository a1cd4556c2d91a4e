import { Command, Flags } from '@oclif/core';
import type { FastifyInstance } from 'fastify';
import { StartError, abandonStart, generatedKeyLine, listenOn } from '../../daemon.js';
import { closeRuntime, followWrites, loadBuilt, openRuntime } from '../../runtime.js';
import { buildEmbeddingsApp } from '../../server/embeddings-app.js';
import { operatorKey } from '../../tenants/secrets.js';
import { openEmbedder } from '../../vector/embedders.js';
import { dataDirFlag, logLevelFlag, modelDirFlag } from '../flags.js';
import { stopOnSignals } from '../stop-on-signals.js';

export default class EmbeddingsServe extends Command {
  static override summary = 'Start the embeddings helper service alone';
  static override description =
    'Serves GET /health and POST /index on the store in the data dir, when no daemon runs on it: `nextrec serve` runs the helper beside the daemon. SIGTERM or Ctrl-C stops it gracefully.';
  static override examples = ['<%= config.bin %> embeddings serve --port 8081 --data-dir ./data'];
  static override flags = {
    port: Flags.integer({
      description: 'port to listen on',
      env: 'NEXTREC_EMBEDDINGS_PORT',
      default: 8081,
      min: 0,
    }),
    host: Flags.string({ description: 'address to bind', env: 'NEXTREC_HOST', default: '127.0.0.1' }),
    'data-dir': dataDirFlag,
    'model-dir': modelDirFlag,
    'log-level': logLevelFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(EmbeddingsServe);
    const dataDir = flags['data-dir'];
    const embedder = await openEmbedder(flags['model-dir']);
    // The store allows one writer: with a daemon on this data dir, its own helper is the one to use.
    const runtime = await openRuntime(dataDir, undefined, undefined, {
      embedder,
      modelDir: flags['model-dir'],
    }).catch((error: Error) =>
      this.error(
        `cannot open the store in ${dataDir} (${error.message.split('\n')[0]}); a daemon running on it serves the embeddings helper at its --embeddings-port`,
        { exit: 1 },
      ),
    );
    const key = operatorKey(dataDir);
    let app: FastifyInstance | undefined;
    let url: string;
    try {
      app = await buildEmbeddingsApp(runtime, key.value, flags['log-level']);
      // Vectors already built serve at once; what they lack is embedded, and builds keep them persisted.
      await loadBuilt(runtime, app.log);
      url = await listenOn(app, flags.host, flags.port, '--port (NEXTREC_EMBEDDINGS_PORT)');
    } catch (error) {
      await abandonStart(runtime, key, [app]);
      if (error instanceof StartError) this.error(error.message, { exit: 1 });
      throw error;
    }
    followWrites(runtime, app.log);
    const shown = generatedKeyLine(key);
    if (shown) this.log(shown);
    this.log(`embeddings helper listening on ${url} (data dir ${dataDir})`);
    stopOnSignals(async () => {
      await app.close();
      await closeRuntime(runtime);
    }, app.log);
  }
}
