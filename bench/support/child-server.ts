import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ChildServer {
  url: string;
  /** The server's process id (its memory is in /proc/<pid>/status). */
  pid: number;
  /** Everything the server printed so far, stdout and stderr interleaved. */
  output(): string;
  /** Calls `listener` with what the server prints from now on, as it arrives. */
  onOutput(listener: (chunk: string) => void): void;
  /** CPU time used so far by all the server's threads, or undefined where /proc is missing. */
  cpuSeconds(): number | undefined;
  /** CPU time used so far by the server's main thread (its event loop), or undefined where /proc is missing. */
  mainThreadCpuSeconds(): number | undefined;
  /** SIGTERM, then wait for a clean exit: a `--cpu-prof` profile is only written on one. */
  stop(): Promise<void>;
}

/** A daemon restarted on a large store loads its state first, which takes minutes on a busy machine. */
const START_TIMEOUT_MS = 10 * 60_000;
const STOP_TIMEOUT_MS = 60_000;
/** The unit of CPU times in /proc, fixed by the Linux ABI. */
const USER_HZ = 100;

/**
 * Starts `node <args>` and resolves with the URL its `listening` pattern captures from stdout. The server
 * runs in its own process so that it never shares a CPU thread with the load generator.
 */
export async function startChildServer(
  name: string,
  args: string[],
  listening: RegExp,
  env: Record<string, string> = {},
  /** A daemon restarted on a large store loads its state before it listens. */
  startTimeoutMs = START_TIMEOUT_MS,
): Promise<ChildServer> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // A benchmark that dies half-way (an exception, Ctrl-C) must not leave a server running; prepended so
  // that the server is gone before other exit handlers remove its data dir.
  const killOnExit = () => child.kill('SIGKILL');
  process.prependOnceListener('exit', killOnExit);

  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const failure = (reason: string) => new Error(`${name} ${reason}; its output:\n${output}`);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(failure('did not start in time')), startTimeoutMs);
    child.stdout.on('data', () => {
      const match = listening.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve(match[1]);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(failure(`exited with code ${code} while starting`));
    });
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });

  return {
    url,
    pid: child.pid!,
    output: () => output,
    onOutput(listener) {
      const forward = (chunk: Buffer) => listener(chunk.toString());
      child.stdout.on('data', forward);
      child.stderr.on('data', forward);
    },
    cpuSeconds: () => cpuSecondsOf(`/proc/${child.pid}/stat`),
    // The main thread's id is the process's.
    mainThreadCpuSeconds: () => cpuSecondsOf(`/proc/${child.pid}/task/${child.pid}/stat`),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
      });
      const code = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      process.removeListener('exit', killOnExit);
      if (code === 'timeout') {
        child.kill('SIGKILL');
        throw failure('did not stop in time after SIGTERM');
      }
      if (code !== 0) throw failure(`exited with code ${code} on SIGTERM`);
    },
  };
}

/** The CPU time of a process or thread, from its `stat` file in /proc. */
function cpuSecondsOf(statFile: string): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(statFile, 'utf8');
  } catch {
    return undefined;
  }
  // utime and stime are fields 14 and 15; counting starts after the command name, which may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}
