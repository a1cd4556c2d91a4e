import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

// For the throwaway servers that tests and benchmarks start (a PostgreSQL cluster in a temporary
// directory): a free port to put them on, and a watchdog that stops them once the process that
// started them is gone.

/** A TCP port of 127.0.0.1 free a moment ago (a server started on it may find it taken meanwhile). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no TCP port to listen on');
  return address.port;
}

/**
 * A process that runs `command` and removes `dir` once this process is gone without having done so
 * itself (it crashed or was killed): nothing is left running on a shared machine. Kill it once the
 * server is stopped the ordinary way.
 */
export function stopWhenGone(dir: string, [file, args]: [string, string[]]): ChildProcess {
  const script = 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; dir=$2; shift 2; "$@"; rm -rf "$dir"';
  const watchdog = spawn('sh', ['-c', script, 'watchdog', String(process.pid), dir, file, ...args], {
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
  return watchdog;
}
