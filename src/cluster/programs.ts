import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Where Debian's package `postgresql` puts the server's programs (not on the PATH). */
const DEBIAN_POSTGRES_DIR = '/usr/lib/postgresql';
/** Where Debian's package `haproxy` puts it: on root's PATH, not on other users'. */
const DEBIAN_HAPROXY = '/usr/sbin/haproxy';

/** The programs a local cluster runs (README.md, "Cluster mode"), and Debian's package of each. */
export interface ClusterPrograms {
  /** The directory of initdb and pg_ctl. */
  postgresBin: string;
  haproxy: string;
  redisServer: string;
}

/**
 * The directories to look for PostgreSQL's initdb and pg_ctl in: `NEXTREC_POSTGRES_BIN` alone when set,
 * else what `pg_config --bindir` says and Debian's directories, newest version first.
 */
export function postgresBinCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.NEXTREC_POSTGRES_BIN) return [env.NEXTREC_POSTGRES_BIN];
  const candidates: string[] = [];
  try {
    const bin = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', env, stdio: 'pipe' });
    candidates.push(bin.trim());
  } catch {
    // No pg_config on the PATH: Debian's own places below.
  }
  const versions = existsSync(DEBIAN_POSTGRES_DIR) ? readdirSync(DEBIAN_POSTGRES_DIR) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  candidates.push(...versions.map((version) => path.join(DEBIAN_POSTGRES_DIR, version, 'bin')));
  return candidates;
}

/** The first of the candidates that holds initdb, or undefined. */
export function postgresBinDir(candidates: string[] = postgresBinCandidates()): string | undefined {
  return candidates.find((dir) => isExecutable(path.join(dir, 'initdb')));
}

/** haproxy: `NEXTREC_HAPROXY` alone when set, else on the PATH or Debian's place; and where it was looked for. */
export function haproxyProgram(env: NodeJS.ProcessEnv = process.env): { file?: string; lookedFor: string } {
  if (env.NEXTREC_HAPROXY) {
    const file = env.NEXTREC_HAPROXY;
    return { file: isExecutable(file) ? file : undefined, lookedFor: `not at ${file}` };
  }
  const file = onPath('haproxy', env) ?? (isExecutable(DEBIAN_HAPROXY) ? DEBIAN_HAPROXY : undefined);
  return { file, lookedFor: `not on the PATH nor at ${DEBIAN_HAPROXY}` };
}

/** A program's path on the PATH of `env`, or undefined. */
export function onPath(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(dir, program);
    if (isExecutable(file)) return file;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds every program the cluster runs, or throws one error that names each one missing and the Debian
 * packages to install.
 */
export function findPrograms(env: NodeJS.ProcessEnv = process.env): ClusterPrograms {
  const candidates = postgresBinCandidates(env);
  const postgresBin = postgresBinDir(candidates);
  const { file: haproxy, lookedFor } = haproxyProgram(env);
  const redisServer = onPath('redis-server', env);
  if (postgresBin !== undefined && haproxy !== undefined && redisServer !== undefined)
    return { postgresBin, haproxy, redisServer };
  const missing: Array<[what: string, pkg: string]> = [];
  if (postgresBin === undefined) {
    const where = candidates.length > 0 ? candidates.join(', ') : 'no directory found';
    missing.push([`PostgreSQL's server (initdb, looked for in ${where})`, 'postgresql']);
  }
  if (haproxy === undefined) missing.push([`haproxy (${lookedFor})`, 'haproxy']);
  if (redisServer === undefined) missing.push(['redis-server (not on the PATH)', 'redis-server']);
  const packages = missing.map(([, pkg]) => pkg);
  throw new MissingProgramsError(
    `the cluster needs ${missing.map(([what]) => what).join(', ')}: ` +
      `install Debian's ${packages.length > 1 ? 'packages' : 'package'} with ` +
      `\`sudo apt-get install ${packages.join(' ')}\``,
    packages,
  );
}

export class MissingProgramsError extends Error {
  constructor(
    message: string,
    /** The Debian packages to install. */
    readonly packages: string[],
  ) {
    super(message);
  }
}

/**
 * The user PostgreSQL's programs run as: the server refuses to run as root, so as root they run as the
 * `postgres` user (which Debian's package creates) through runuser; otherwise as this process's user.
 */
export function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new MissingProgramsError(
      'PostgreSQL run as root needs the `postgres` user: install the Debian package `postgresql`',
      ['postgresql'],
    );
  }
}

/** The command line that runs one of PostgreSQL's programs, as the `postgres` user when `as` is given. */
export function postgresCommand(
  bin: string,
  program: string,
  args: string[],
  as: { uid: number } | undefined,
): [string, string[]] {
  const file = path.join(bin, program);
  return as ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}
