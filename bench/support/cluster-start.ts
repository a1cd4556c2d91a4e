import path from 'node:path';
import type { BenchPostgres } from './bench-postgres.js';
import { benchShop, loadShop } from './shop-loader.js';
import { createBenchTenant, startStoreDaemon, type StoreOf } from './store-daemon.js';

type Kind = StoreOf['kind'];

export interface StartOptions {
  items: number;
  interactions: number;
  rounds: number;
}

export interface StartFigures {
  /** Seconds to load the shop through the first daemon, in batches of 5,000 (bench/support/shop-loader). */
  loadSeconds: Record<Kind, number>;
  /** Each restart's seconds from spawn to `/health/ready` answering 200. */
  startSeconds: Record<Kind, number[]>;
  /** The same of a daemon on an empty store of the kind, started just before: what is not the load. */
  emptySeconds: Record<Kind, number[]>;
}

/**
 * A shop of `interactions` loaded through a daemon on PostgreSQL and through one on DuckDB, each then
 * stopped; then rounds of restarts of each (which goes first alternates), timed from the process's spawn
 * to its first 200 on `/health/ready`: the whole state read from the store. Each restart follows the
 * start of a daemon on an empty store of the same kind (with the `bench` tenant), timed the same way:
 * what a start costs whatever the store holds (node, the store's connection, the warm-up). The daemons are stopped
 * right after the load, before the models' builds wait out the burst of writes, so no restart has built
 * models to load: the figure is the state's load alone.
 */
export async function measureStarts(
  postgres: BenchPostgres,
  options: StartOptions,
  workDir: string,
): Promise<StartFigures> {
  const stores: Record<Kind, { dataDir: string; store: StoreOf }> = {
    postgres: {
      dataDir: path.join(workDir, 'start-postgres'),
      store: { kind: 'postgres', url: await postgres.createDatabase('start') },
    },
    duckdb: { dataDir: path.join(workDir, 'start-duckdb'), store: { kind: 'duckdb' } },
  };
  const empty: Record<Kind, { dataDir: string; store: StoreOf }> = {
    postgres: {
      dataDir: path.join(workDir, 'start-postgres-empty'),
      store: { kind: 'postgres', url: await postgres.createDatabase('start_empty') },
    },
    duckdb: { dataDir: path.join(workDir, 'start-duckdb-empty'), store: { kind: 'duckdb' } },
  };
  const figures: StartFigures = {
    loadSeconds: { postgres: 0, duckdb: 0 },
    startSeconds: { postgres: [], duckdb: [] },
    emptySeconds: { postgres: [], duckdb: [] },
  };
  for (const kind of ['postgres', 'duckdb'] as const) {
    const { server } = await startStoreDaemon(empty[kind].dataDir, empty[kind].store);
    try {
      await createBenchTenant(server.url);
    } finally {
      await server.stop();
    }
  }
  const shop = benchShop(options.items, options.interactions);
  for (const kind of ['postgres', 'duckdb'] as const) {
    const { dataDir, store } = stores[kind];
    const { server } = await startStoreDaemon(dataDir, store);
    try {
      const headers = await createBenchTenant(server.url);
      const started = performance.now();
      await loadShop(server.url, headers, shop);
      figures.loadSeconds[kind] = (performance.now() - started) / 1000;
    } finally {
      await server.stop();
    }
    console.log(
      `cluster: ${options.interactions.toLocaleString('en-US')} interactions loaded on ${kind} in ` +
        `${figures.loadSeconds[kind].toFixed(1)} s`,
    );
  }
  for (let round = 0; round < options.rounds; round++) {
    const order: Kind[] = round % 2 === 0 ? ['postgres', 'duckdb'] : ['duckdb', 'postgres'];
    for (const kind of order) {
      const timeStart = async ({ dataDir, store }: { dataDir: string; store: StoreOf }) => {
        const daemon = await startStoreDaemon(dataDir, store);
        await daemon.server.stop();
        return daemon.readySeconds;
      };
      const idle = await timeStart(empty[kind]);
      const loaded = await timeStart(stores[kind]);
      figures.emptySeconds[kind].push(idle);
      figures.startSeconds[kind].push(loaded);
      console.log(
        `cluster: start round ${round + 1}: a daemon on ${kind} ready in ${loaded.toFixed(2)} s ` +
          `(empty: ${idle.toFixed(2)} s)`,
      );
    }
  }
  return figures;
}
