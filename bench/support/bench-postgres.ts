import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startPostgres } from '../../src/cluster/postgres.js';
import {
  postgresBinCandidates,
  postgresBinDir,
  postgresCommand,
  postgresUser,
} from '../../src/cluster/programs.js';
import { freePort, stopWhenGone } from '../../src/cluster/throwaway.js';

/** A throwaway PostgreSQL server for one benchmark run. */
export interface BenchPostgres {
  /** The URL of its database `nextrec` (password included: pass it in the environment). */
  url: string;
  /** Creates an empty database and returns its URL (password included: pass it in the environment). */
  createDatabase(name: string): Promise<string>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL as `npm run cluster` does (src/cluster/postgres.ts: initdb, as the `postgres` user
 * when root, TCP on 127.0.0.1 only, a password) in a temporary directory, on a free port. Commits are
 * synced to disk (`fsync` and `synchronous_commit` at PostgreSQL's defaults, on), as in production. It
 * stops when `stop` is called, when this process exits (an exception, a signal), and, through a
 * watchdog, when this process is killed.
 */
export async function startBenchPostgres(): Promise<BenchPostgres> {
  const candidates = postgresBinCandidates();
  const bin = postgresBinDir(candidates);
  if (bin === undefined)
    throw new Error(
      `PostgreSQL's server (initdb, pg_ctl) is missing, looked for in ${candidates.join(', ')}: ` +
        'install the Debian package `postgresql`',
    );
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-pg-'));
  // As root the server runs as the postgres user, which must reach its files inside.
  chmodSync(dir, 0o755);
  const stopCommand = postgresCommand(
    bin,
    'pg_ctl',
    ['-D', path.join(dir, 'postgres'), '-m', 'immediate', '-w', 'stop'],
    postgresUser(),
  );
  const watchdog = stopWhenGone(dir, stopCommand);
  let stopped = false;
  /** Stops the server at once, unless `stop` did so already, and removes its directory. */
  const stopNow = (running = true) => {
    if (stopped) return;
    stopped = true;
    watchdog.kill();
    try {
      if (running) execFileSync(...stopCommand, { cwd: '/', stdio: 'ignore' });
    } catch {
      // Not running (it did not start).
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const atExit = () => stopNow();
  process.once('exit', atExit);
  let server: Awaited<ReturnType<typeof startPostgres>>;
  try {
    server = await startPostgres({ dir, port: await freePort(), bin });
  } catch (error) {
    stopNow();
    throw error;
  }
  return {
    url: server.url,
    async createDatabase(name) {
      const admin = new pg.Client({ connectionString: server.url.replace(/[^/]+$/, 'postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
      } finally {
        await admin.end();
      }
      return server.url.replace(/[^/]+$/, name);
    },
    async stop() {
      if (stopped) return;
      await server.stop();
      process.removeListener('exit', atExit);
      stopNow(false);
    },
  };
}
