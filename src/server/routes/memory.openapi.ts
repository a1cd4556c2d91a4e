import type { Operations } from '../openapi/operation.js';
import * as R from '../openapi/responses.js';

/**
 * What the OpenAPI document says of the routes of memory.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /debug/memory': {
    id: 'memory',
    tag: 'Operations',
    summary: 'Where the memory goes',
    description:
      "The process's resident memory and V8 heaps (the event-loop thread's and the ranking thread's), the store's part (`duckdb`: what the store's DuckDB holds against its limit, its file and log; or `postgres`: the pool's connections, the database's size and the lake export's in-memory DuckDB), and per tenant what the serving state holds: items, identities, history events, the bytes each thread holds of its own (the catalog's columns) and of what the threads share (histories, counters, models). Operator key.",
    body: R.MEMORY,
    answer: {
      process: {
        rss: 353_640_448,
        heapTotal: 98_349_056,
        heapUsed: 40_715_752,
        external: 13_322_608,
        arrayBuffers: 9_648_841,
      },
      heaps: {
        eventLoop: { used: 40_765_832, total: 98_349_056, physical: 98_037_760, external: 13_323_184 },
        rankingThread: { used: 12_176_992, total: 13_754_368, physical: 12_898_304, external: 5_728_621 },
      },
      duckdb: {
        memoryLimit: '256MB',
        threads: 2,
        memory: {
          total: 25_137_152,
          ART_INDEX: 4_194_304,
          BASE_TABLE: 1_310_720,
          IN_MEMORY_TABLE: 19_632_128,
        },
        temporary: 0,
        fileBytes: 12_288,
        walBytes: 5_806_813,
        itemKeys: 5000,
      },
      tenants: { acme: { items: 5000, identities: 1535, historyEvents: 48_000 } },
    },
  },
};
