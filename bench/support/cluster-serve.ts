import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../../fixtures/prng.js';
import { freePort } from '../../src/cluster/throwaway.js';
import type { BenchPostgres } from './bench-postgres.js';
import { startBenchHaproxy, portOf, type Backend } from './bench-haproxy.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { waitForDaemonIdle, waitForModels } from './daemon-memory.js';
import { checkFirstAnswer, runLoad, type LoadFigures, type LoadSpec } from './http-load.js';
import { machineBusySeconds } from './machine-cpu.js';
import { benchShop, loadShop, postJson, type LoadedShop } from './shop-loader.js';
import { createBenchTenant, startStoreDaemon, type StoreDaemon } from './store-daemon.js';

const BARE_ROUTE = fileURLToPath(new URL('./bare-recommendations.js', import.meta.url));
const WARMUP_S = 2;
const SCENARIO = 'bench-user-to-item';
const COUNT = 10;
const PROJECTION = ['attributes.name', 'attributes.price'];

export type Backends = 'bare' | 'one' | 'two';

export interface ServeRun extends LoadFigures {
  /** Cores busy during the timed run: the servers behind haproxy (together), and the whole machine. */
  serverCores?: number;
  machineCores?: number;
}

export type ServeRound = Record<Backends, ServeRun>;

export interface ServeOptions {
  items: number;
  interactions: number;
  rounds: number;
  durationS: number;
  connections: number;
}

/**
 * Uncached user-to-item requests (`POST /recommendations`, a scenario without rules, 10 items with two
 * attributes, `noCache`) through haproxy, in rounds of three runs back to back: haproxy in front of a
 * bare Fastify route answering a fixed list, of one daemon, and of two daemons, both on one PostgreSQL
 * database and one data dir. The shop is loaded and the models built through the first daemon before
 * the second starts, which then loads it all from the store and the data dir.
 */
export async function measureServeRounds(
  postgres: BenchPostgres,
  options: ServeOptions,
  workDir: string,
): Promise<ServeRound[]> {
  const url = await postgres.createDatabase('serve');
  const dataDir = path.join(workDir, 'serve-data');
  const store = { kind: 'postgres' as const, url };
  const running: Array<{ stop(): Promise<void> }> = [];
  try {
    const first = await startStoreDaemon(dataDir, store);
    running.push(first.server);
    const headers = await createBenchTenant(first.server.url);
    console.log(
      `cluster: loading ${options.items.toLocaleString('en-US')} items and ` +
        `${options.interactions.toLocaleString('en-US')} interactions through the first daemon...`,
    );
    const shop = await loadShop(first.server.url, headers, benchShop(options.items, options.interactions));
    await postJson(
      `${first.server.url}/scenarios`,
      headers,
      { slug: SCENARIO, logicType: 'user-to-item' },
      201,
    );
    const sources = { cooccurrence: options.interactions, ease: options.interactions };
    await waitForModels(first.server, ['cooccurrence', 'ease'], sources);
    const second = await startStoreDaemon(dataDir, store);
    running.push(second.server);
    await waitForModels(second.server, ['cooccurrence', 'ease'], sources);
    for (const daemon of [first, second]) await waitForDaemonIdle(daemon.server);
    const bare = await startChildServer('bare route', [BARE_ROUTE], /bare route listening on (http:\/\/\S+)/);
    running.push(bare);
    const servers: Record<Backends, Array<{ server: ChildServer; backend: Backend }>> = {
      // The bare route has no embeddings helper: haproxy's second frontend, unused here, finds none.
      bare: [{ server: bare, backend: { port: portOf(bare.url), embeddingsPort: await freePort() } }],
      one: [asBackend(first)],
      two: [asBackend(first), asBackend(second)],
    };
    const requests = userToItemRequests(shop);
    const spec = (haproxyUrl: string): LoadSpec => ({
      url: haproxyUrl,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      requests,
      connections: options.connections,
    });
    const rounds: ServeRound[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const runs = {} as ServeRound;
      for (const backends of ['bare', 'one', 'two'] as const) {
        const haproxy = await startBenchHaproxy(
          path.join(workDir, `haproxy-${backends}`),
          servers[backends].map((s) => s.backend),
        );
        try {
          const load = spec(haproxy.url);
          if (backends !== 'bare')
            await checkFirstAnswer(load, 'user-to-item through haproxy', {
              count: COUNT,
              algorithm: 'weighted-history',
            });
          runs[backends] = await measure(
            servers[backends].map((s) => s.server),
            load,
            options.durationS,
          );
        } finally {
          await haproxy.stop();
        }
      }
      console.log(
        `cluster: recommendations round ${round + 1}: bare ${Math.round(runs.bare.rps)}, one daemon ` +
          `${Math.round(runs.one.rps)}, two daemons ${Math.round(runs.two.rps)} requests/s`,
      );
      rounds.push(runs);
    }
    return rounds;
  } finally {
    for (const server of running.reverse()) await server.stop();
  }
}

function asBackend(daemon: StoreDaemon): { server: ChildServer; backend: Backend } {
  return {
    server: daemon.server,
    backend: { port: portOf(daemon.server.url), embeddingsPort: daemon.embeddingsPort },
  };
}

/** Every user of the shop, in an order of their own, so that consecutive requests ask for unrelated users. */
function userToItemRequests(shop: LoadedShop): Array<{ path: string; body: string }> {
  const order = Array.from(shop.userIds.keys());
  new Rng(7).shuffle(order);
  return order.map((i) => ({
    path: '/recommendations',
    body: JSON.stringify({
      scenario: SCENARIO,
      userId: shop.userIds[i],
      count: COUNT,
      includedProperties: PROJECTION,
      // Neither the answer cache nor the cache of request bodies answers it (docs/benchmarks.md).
      noCache: true,
    }),
  }));
}

/** A warm-up whose figures are dropped (JIT, caches, connections through haproxy), then the timed run. */
async function measure(servers: ChildServer[], spec: LoadSpec, durationS: number): Promise<ServeRun> {
  await runLoad(spec, WARMUP_S);
  const cpu = () => {
    const each = servers.map((server) => server.cpuSeconds());
    return each.some((seconds) => seconds === undefined) ? undefined : each.reduce((a, b) => a! + b!, 0);
  };
  const serverBefore = cpu();
  const machineBefore = machineBusySeconds();
  const figures = await runLoad(spec, durationS);
  const serverAfter = cpu();
  const machineAfter = machineBusySeconds();
  const seconds = (figures.endedUs - figures.startedUs) / 1e6;
  const cores = (before?: number, after?: number) =>
    before === undefined || after === undefined ? undefined : (after - before) / seconds;
  return {
    ...figures,
    serverCores: cores(serverBefore, serverAfter),
    machineCores: cores(machineBefore, machineAfter),
  };
}
