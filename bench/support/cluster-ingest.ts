import { rmSync } from 'node:fs';
import path from 'node:path';
import type { BenchPostgres } from './bench-postgres.js';
import { eventsPerSecond, postBatches, type Batch, type LoadResult } from './load.js';

import { createBenchTenant, startStoreDaemon, type StoreOf } from './store-daemon.js';

/** As bench/ingest: untimed batches first, so that the daemon is measured with its hot paths compiled. */
const WARMUP_BATCHES = 20;

export interface IngestRound {
  postgres: LoadResult;
  duckdb: LoadResult;
  /** PostgreSQL's events/s over DuckDB's. */
  ratio: number;
}

/**
 * Rounds of a daemon on PostgreSQL and one on DuckDB taking the same batches, in turn (which goes first
 * alternates), each daemon fresh: an empty database and data dir. The machine's load drifts within a
 * run; a ratio of rates measured back to back drifts less.
 */
export async function measureIngestRounds(
  postgres: BenchPostgres,
  batches: Batch[],
  options: { rounds: number; concurrency: number },
  workDir: string,
): Promise<IngestRound[]> {
  const rounds: IngestRound[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const measure = async (kind: StoreOf['kind']) => {
      const dataDir = path.join(workDir, `ingest-${kind}-${round}`);
      const store: StoreOf =
        kind === 'postgres' ? { kind, url: await postgres.createDatabase(`ingest_${round}`) } : { kind };
      try {
        return await measureDaemon(dataDir, store, batches, options.concurrency);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    };
    const order: Array<StoreOf['kind']> = round % 2 === 0 ? ['postgres', 'duckdb'] : ['duckdb', 'postgres'];
    const results = new Map<StoreOf['kind'], LoadResult>();
    for (const kind of order) results.set(kind, await measure(kind));
    const pg = results.get('postgres')!;
    const duck = results.get('duckdb')!;
    rounds.push({ postgres: pg, duckdb: duck, ratio: eventsPerSecond(pg) / eventsPerSecond(duck) });
    console.log(
      `cluster: ingest round ${round + 1}: PostgreSQL ${eventsPerSecond(pg).toLocaleString('en-US')} events/s, ` +
        `DuckDB ${eventsPerSecond(duck).toLocaleString('en-US')} events/s`,
    );
  }
  return rounds;
}

async function measureDaemon(
  dataDir: string,
  store: StoreOf,
  batches: Batch[],
  concurrency: number,
): Promise<LoadResult> {
  const { server } = await startStoreDaemon(dataDir, store);
  try {
    const headers = { ...(await createBenchTenant(server.url)), 'content-type': 'application/json' };
    const target = { url: server.url, path: '/ingestion/interactions', headers };
    await postBatches(target, batches.slice(0, WARMUP_BATCHES), concurrency);
    return await postBatches(target, batches, concurrency);
  } finally {
    await server.stop();
  }
}
