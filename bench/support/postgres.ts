import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, stopWhenGone } from '../../src/cluster/throwaway.js';
import {
  postgresBinCandidates,
  postgresBinDir,
  postgresCommand,
  postgresUser,
} from '../../src/cluster/programs.js';

/** A throwaway PostgreSQL cluster with one empty database, for one test file or one benchmark. */
export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/nextrec`: the form `--store` takes. */
  url: string;
  /** Stops the cluster and removes its directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);

const DATABASE = 'nextrec';

/** The directory of initdb and pg_ctl; a clear error when the server is not installed (never a skip). */
function binDir(): string {
  const candidates = postgresBinCandidates();
  const found = postgresBinDir(candidates);
  if (found === undefined)
    throw new Error(
      `the PostgreSQL tests need PostgreSQL 15's server (initdb and pg_ctl, looked for in ${candidates.join(', ')}): ` +
        'install the Debian package `postgresql` (apt-get install postgresql)',
    );
  return found;
}

/**
 * Starts a cluster in a temporary directory (its Unix socket there too, so that nothing of the machine's
 * own PostgreSQL is touched) listening on a free port of 127.0.0.1, and creates the database. Commits
 * are synced to disk as in production (fsync on): the tests measure the real commit path. Only initdb's
 * own final sync of the new files is skipped: the cluster never outlives the test file.
 */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const asPostgres = postgresUser();
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-pg-'));
  const data = path.join(dir, 'data');
  if (asPostgres) chownSync(dir, asPostgres.uid, asPostgres.gid);
  const as = (program: string, ...args: string[]) => postgresCommand(bin, program, args, asPostgres);
  const stopCommand = as('pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop');
  // Should this process crash or be killed, the cluster is stopped and its directory removed.
  const watchdog = stopWhenGone(dir, stopCommand);
  const stop = async () => {
    watchdog.kill();
    await run(...stopCommand).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const initdb = ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'];
    await run(...as('initdb', ...initdb));
    const port = await startServer((...args) => as('pg_ctl', '-D', data, ...args), data, dir);
    const url = `postgres://postgres@127.0.0.1:${port}/${DATABASE}`;
    const admin = new pg.Client({ connectionString: url.replace(/[^/]+$/, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await admin.end();
    }
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts the server on a free port (another one if that was taken meanwhile); returns the port. */
async function startServer(
  pgCtl: (...args: string[]) => [string, string[]],
  data: string,
  dir: string,
): Promise<number> {
  const log = path.join(dir, 'server.log');
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    // postgresql.conf takes the last setting of a name: these override initdb's.
    appendFileSync(
      path.join(data, 'postgresql.conf'),
      `\nport = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '${dir}'\nfsync = on\n`,
    );
    try {
      await run(...pgCtl('-l', log, '-w', 'start'));
      return port;
    } catch (error) {
      lastError = error;
    }
  }
  const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-20).join('\n') : '';
  throw new Error(`PostgreSQL did not start: ${String(lastError)}\n${tail}`);
}
