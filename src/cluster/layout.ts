import path from 'node:path';

/**
 * Where everything of a local cluster lives (README.md, "Cluster mode"): its directory, and its ports, all
 * of 127.0.0.1, counted from the cluster's port P: haproxy's on P (the API) and P + 1 (the embeddings
 * helpers), daemon n's on P + 2n and P + 2n + 1, then PostgreSQL's and Redis's.
 */
export interface ClusterLayout {
  /** The cluster's directory (absolute): PostgreSQL's cluster, the daemons' data dir, pid files, logs. */
  dir: string;
  port: number;
  embeddingsPort: number;
  daemons: DaemonLayout[];
  postgresPort: number;
  redisPort: number;
}

export interface DaemonLayout {
  /** 1, 2, ...: its pid file is `<dir>/daemon-<n>.pid`. */
  n: number;
  port: number;
  embeddingsPort: number;
}

export const DEFAULT_DIR = './cluster-data';
export const DEFAULT_PORT = 8080;
export const DEFAULT_DAEMONS = 2;

/** The layout the environment asks for; a RangeError says which variable is wrong. */
export function clusterLayout(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ClusterLayout {
  const dir = path.resolve(cwd, env.NEXTREC_CLUSTER_DIR || DEFAULT_DIR);
  const daemonCount = integer(env, 'NEXTREC_CLUSTER_DAEMONS', DEFAULT_DAEMONS, 1, 64);
  const port = integer(env, 'NEXTREC_CLUSTER_PORT', DEFAULT_PORT, 1, 65535 - 2 * daemonCount - 3);
  const daemons = Array.from({ length: daemonCount }, (_, i) => ({
    n: i + 1,
    port: port + 2 * (i + 1),
    embeddingsPort: port + 2 * (i + 1) + 1,
  }));
  const after = port + 2 * daemonCount + 2;
  return { dir, port, embeddingsPort: port + 1, daemons, postgresPort: after, redisPort: after + 1 };
}

/** Every port of the layout, with what takes it. */
export function portsOf(layout: ClusterLayout): Array<[port: number, what: string]> {
  return [
    [layout.port, 'haproxy (the API)'],
    [layout.embeddingsPort, 'haproxy (the embeddings helpers)'],
    ...layout.daemons.flatMap(({ n, port, embeddingsPort }): Array<[number, string]> => [
      [port, `daemon ${n}`],
      [embeddingsPort, `daemon ${n}'s embeddings helper`],
    ]),
    [layout.postgresPort, 'PostgreSQL'],
    [layout.redisPort, 'Redis'],
  ];
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, not '${text}'`);
  return value;
}
