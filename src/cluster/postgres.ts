import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { ClusterFailure, logTail } from './processes.js';
import { postgresCommand, postgresUser } from './programs.js';

const run = promisify(execFile);

const DATABASE = 'nextrec';
/** Rewritten at every start: the cluster's port may change between starts, its data stays. */
const SETTINGS_FILE = 'nextrec-cluster.conf';

export interface ClusterPostgres {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/nextrec`: the store URL the daemons take. */
  url: string;
  /** Stops the server (fast shutdown: the daemons are gone by then). */
  stop(): Promise<void>;
}

/**
 * Starts the cluster's own PostgreSQL server on 127.0.0.1:`port`, its files in `<dir>/postgres` (made
 * by initdb on the first start, reused after), with the database `nextrec`. Only TCP on 127.0.0.1, no
 * Unix socket: nothing of the machine's own PostgreSQL is touched. The superuser's password is
 * generated once into `<dir>/postgres.password`.
 */
export async function startPostgres(options: {
  dir: string;
  port: number;
  bin: string;
}): Promise<ClusterPostgres> {
  const { dir, port, bin } = options;
  const data = path.join(dir, 'postgres');
  const log = path.join(dir, 'postgres.log');
  const owner = postgresUser();
  const as = (program: string, ...args: string[]) => postgresCommand(bin, program, args, owner);
  // As the postgres user, the programs may not be allowed into the current directory. In a process
  // group of their own, as the cluster's other processes: Ctrl-C reaches the script alone.
  const inGroup = { cwd: '/', detached: true };
  const fail = (what: string, error: unknown) => {
    const hint = owner
      ? `\n(as root, PostgreSQL runs as the postgres user, which must be able to reach ${dir})`
      : '';
    const stderr = (error as { stderr?: string }).stderr?.trim() || String(error);
    return new ClusterFailure(`PostgreSQL: ${what} failed: ${stderr}${hint}\n${logTail(log)}`);
  };

  const password = passwordOf(path.join(dir, 'postgres.password'));
  if (!existsSync(path.join(data, 'PG_VERSION'))) {
    mkdirSync(data, { recursive: true, mode: 0o700 });
    if (owner) chownSync(data, owner.uid, owner.gid);
    const passwordFile = path.join(dir, 'postgres.initdb-password');
    writeFileSync(passwordFile, password, { mode: 0o600 });
    if (owner) chownSync(passwordFile, owner.uid, owner.gid);
    try {
      const initdb = ['-D', data, '-U', 'postgres', '-A', 'scram-sha-256', `--pwfile=${passwordFile}`];
      await run(...as('initdb', ...initdb, '-E', 'UTF8', '--locale=C'), inGroup);
    } catch (error) {
      throw fail('initdb', error);
    } finally {
      rmSync(passwordFile, { force: true });
    }
    // postgresql.conf takes the last setting of a name: these override initdb's.
    appendFileSync(path.join(data, 'postgresql.conf'), `\ninclude_if_exists = '${SETTINGS_FILE}'\n`);
  }
  const settings = path.join(data, SETTINGS_FILE);
  writeFileSync(settings, `port = ${port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\n`);
  if (owner) chownSync(settings, owner.uid, owner.gid);
  appendFileSync(log, '');
  if (owner) chownSync(log, owner.uid, owner.gid);
  // A server already running on this directory belongs to another cluster: leave it alone.
  const running = await run(...as('pg_ctl', '-D', data, 'status'), inGroup).then(
    () => true,
    () => false,
  );
  if (running)
    throw new ClusterFailure(
      `PostgreSQL already runs on ${data}: another cluster uses ${dir}; stop it, or choose another NEXTREC_CLUSTER_DIR`,
    );
  const stop = async () => {
    await run(...as('pg_ctl', '-D', data, '-m', 'fast', '-w', 'stop'), inGroup).catch(() => undefined);
  };
  try {
    await run(...as('pg_ctl', '-D', data, '-l', log, '-w', '-t', '600', 'start'), inGroup);
  } catch (error) {
    await stop();
    throw fail('pg_ctl start', error);
  }
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/${DATABASE}`;
  try {
    await createDatabase(url);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}

/** The password in `file`, generated (hex: nothing to escape in a URL) when there is none yet. */
function passwordOf(file: string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const password = randomBytes(24).toString('hex');
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/** Creates the database on the first start. */
async function createDatabase(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url.replace(/[^/]+$/, 'postgres') });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
}
