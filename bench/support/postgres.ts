import { startBenchPostgres } from './bench-postgres.js';

/** A throwaway PostgreSQL cluster with one empty database, for one test file or one benchmark. */
export interface TestPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/nextrec`: the form `--store` takes. */
  url: string;
  /** Stops the cluster and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL as `npm run cluster` does, in a temporary directory on a free port, stopped when this
 * process ends however it ends (bench-postgres.ts), with one empty database `nextrec`. Commits are synced
 * to disk as in production: the tests and benchmarks measure the real commit path.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const server = await startBenchPostgres();
  return { url: server.url, stop: () => server.stop() };
}
