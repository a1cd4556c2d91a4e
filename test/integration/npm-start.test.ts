import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, descendants } from '../support/cluster.js';
import { OPERATOR_KEY, removeDataDir, tempDataDir } from '../support/daemon-process.js';
import { PATIENCE_MS } from '../support/eventually.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDataDir));

/** `npm start` (README.md, "Quick start") in its own process group, on a temporary data dir and a free port. */
async function npmStart() {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, NEXTREC_DATA_DIR: dataDir, NEXTREC_PORT: '0', NEXTREC_ADMIN_KEY: OPERATOR_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen:\n${output}`)), PATIENCE_MS);
    npm.stdout.on('data', () => {
      if (output.includes('nextrec listening on')) {
        clearTimeout(timer);
        resolve();
      }
    });
    npm.once('exit', () => reject(new Error(`npm start exited:\n${output}`)));
  });
  const daemonFile = path.join(dataDir, 'daemon.json');
  const daemonPid = (JSON.parse(readFileSync(daemonFile, 'utf8')) as { pid: number }).pid;
  return { npm: npm.pid!, daemonPid, daemonFile, exited, output: () => output };
}

describe('npm start', () => {
  it.each([
    ['SIGTERM to npm', (npm: number) => process.kill(npm, 'SIGTERM')],
    ['Ctrl-C (SIGINT to its process group)', (npm: number) => process.kill(-npm, 'SIGINT')],
  ])('stops the daemon gracefully on %s and leaves no process behind', async (_, signal) => {
    const started = await npmStart();
    const processes = descendants(started.npm);
    try {
      expect(processes).toContain(started.daemonPid);
      signal(started.npm);
      // npm forwards the signal to the daemon; npm itself may end by that signal before the daemon has
      // stopped, so the daemon's own exit is waited for below.
      const npmExit = await started.exited;
      expect(npmExit.code === 0 || npmExit.signal === 'SIGTERM' || npmExit.signal === 'SIGINT').toBe(true);
      const deadline = Date.now() + PATIENCE_MS;
      while (processes.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(started.output()).toContain('"msg":"shutting down"');
      // daemon.json names "the running daemon" (docs/configuration.md): a daemon that stopped removes it.
      expect(existsSync(started.daemonFile)).toBe(false);
      expect(processes.filter(alive)).toEqual([]);
    } finally {
      for (const pid of [started.npm, ...processes].filter(alive)) process.kill(pid, 'SIGKILL');
    }
  });
});
