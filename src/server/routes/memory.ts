import { memoryUsage } from 'node:process';
import type { FastifyInstance } from 'fastify';
import type { Ranker } from '../../engine/ranker.js';
import { heapFigures, stateFootprint } from '../../state/memory.js';

export interface MemoryRouteOptions {
  ranker: Ranker;
}

/**
 * `GET /debug/memory` (operator key; docs/memory.md): where the daemon's memory is, for sizing and
 * for bench/memory. Its fields beyond the documented ones follow the implementation.
 */
export async function memoryRoutes(app: FastifyInstance, options: MemoryRouteOptions): Promise<void> {
  app.get('/debug/memory', { config: { access: 'operator' }, schema: { hide: true } }, async () => {
    const { rss, heapTotal, heapUsed, external, arrayBuffers } = memoryUsage();
    const [rankingThread, store] = await Promise.all([
      options.ranker.threadHeap?.() ?? Promise.resolve(undefined),
      app.runtime.store.memory(),
    ]);
    // The store's part under its own name (`duckdb` or `postgres`), as the store gives it.
    return {
      process: { rss, heapTotal, heapUsed, external, arrayBuffers },
      heaps: { eventLoop: heapFigures(), rankingThread: rankingThread ?? null },
      pages: app.recommender.pagesHeld(),
      ...store,
      tenants: stateFootprint(app.runtime.state),
    };
  });
}
