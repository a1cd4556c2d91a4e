import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a process asked to stop may take before it is killed. */
const STOP_GRACE_MS = 60_000;

/** One process of the cluster, its output appended to a log file. */
export interface ClusterProcess {
  name: string;
  child: ChildProcess;
  log: string;
  /** Settles when the process has exited (or could not start), with how it ended. */
  exited: Promise<string>;
  /** Sends `signal`, then SIGKILL if it outlives the grace period; resolves once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts a program in a process group of its own, so that Ctrl-C in the terminal reaches only the
 * cluster's script, which stops the processes in order (README.md, "Cluster mode").
 */
export function startProcess(
  name: string,
  file: string,
  args: string[],
  options: { log: string; env?: NodeJS.ProcessEnv; cwd?: string },
): ClusterProcess {
  const out = openSync(options.log, 'a');
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', out, out],
      detached: true,
    });
  } finally {
    closeSync(out);
  }
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : `exit code ${code}`));
    child.once('error', (error) => resolve(`could not start: ${error.message}`));
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    child.kill(signal);
    const outlived = sleep(STOP_GRACE_MS, 'outlived', { ref: false });
    if ((await Promise.race([exited, outlived])) === 'outlived') {
      child.kill('SIGKILL');
      await exited;
    }
  };
  return { name, child, log: options.log, exited, stop };
}

/** The last lines of a log file, to show why something did not start. */
export function logTail(log: string, lines = 20): string {
  if (!existsSync(log)) return '';
  return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Something of the cluster did not start, or stopped by itself: its message says what, no stack needed. */
export class ClusterFailure extends Error {}

/** Thrown when a wait ends because the cluster is stopping: nothing to report. */
export class Stopping extends Error {
  constructor() {
    super('stopping');
  }
}

/**
 * Polls `check` every 200 ms until it returns true. Fails with the log's tail when the process exits
 * meanwhile, and with `Stopping` once `signal` aborts. No time limit: on a busy machine a start takes
 * what it takes, and Ctrl-C ends the wait.
 */
export async function waitUntil(
  check: () => Promise<boolean>,
  what: { process: ClusterProcess; signal: AbortSignal },
): Promise<void> {
  const { process: running, signal } = what;
  let exit: string | undefined;
  void running.exited.then((how) => (exit = how));
  for (;;) {
    if (signal.aborted) throw new Stopping();
    if (exit !== undefined)
      throw new ClusterFailure(
        `${running.name} stopped (${exit}) before it was ready:\n${logTail(running.log)}`,
      );
    if (await check().catch(() => false)) return;
    await sleep(200);
  }
}
