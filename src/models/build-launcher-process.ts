/**
 * The process that starts the daemon's build processes (README, "Batch models"). Starting a process
 * copies the page tables of the one that starts it: from a daemon holding 500 MB that stops its event
 * loop for 20 to 30 ms, and its other threads too, each time a build begins. This process is small, so
 * starting a build here costs the daemon only a message. It imports nothing but Node's own modules.
 *
 * It ends when the daemon does (its channel closes), and ends the builds it started with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import type { LauncherReply, LauncherRequest } from './build-launcher.js';

const running = new Map<number, ChildProcess>();

function reply(message: LauncherReply): void {
  process.send?.(message);
}

function launch(request: Extract<LauncherRequest, { kind: 'launch' }>): void {
  const { id } = request;
  const child = spawn(process.execPath, request.args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: request.env,
  });
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, request.niceness);
    } catch {
      // Not permitted here (some containers): the build runs at this process's priority.
    }
  }
  running.set(id, child);
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  child.once('error', (error) => {
    running.delete(id);
    reply({ kind: 'failed', id, message: error.message });
  });
  // 'close' rather than 'exit': what the build wrote to stderr has all been read by then.
  child.once('close', (code, signal) => {
    if (!running.delete(id)) return;
    reply({ kind: 'ended', id, code, signal, errors });
  });
}

process.on('message', (request: LauncherRequest) => {
  if (request.kind === 'launch') launch(request);
  else running.get(request.id)?.kill('SIGTERM');
});

process.on('disconnect', () => {
  for (const child of running.values()) child.kill('SIGTERM');
  process.exit(0);
});
