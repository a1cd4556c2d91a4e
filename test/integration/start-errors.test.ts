import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  type DaemonProcess,
} from '../support/daemon-process.js';
import { PATIENCE_MS } from '../support/eventually.js';

let daemon: DaemonProcess;
const dirs: string[] = [];

/** Runs `nextrec <args>` to its exit (or kills it after PATIENCE_MS); without NEXTREC_ADMIN_KEY, as a user would. */
function nextrec(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.NEXTREC_ADMIN_KEY;
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), PATIENCE_MS);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      // oclif wraps a message over lines that start with ' › '.
      resolve({ code, stdout, stderr: stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ') });
    }),
  );
}

beforeAll(async () => {
  daemon = await startDaemonProcess({ args: ['--embeddings-port', '0'] });
});

afterAll(async () => {
  await daemon.stop();
  for (const dir of [daemon.dataDir, ...dirs]) removeDataDir(dir);
});

describe('a daemon that cannot start', () => {
  it('says which daemon uses the data dir, and exits non-zero', async () => {
    const second = await nextrec(['serve', '--port', '0', '--data-dir', daemon.dataDir]);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(
      `another nextrec daemon (pid ${daemon.process.pid}) is using ${daemon.dataDir}; stop it, or start this one with another --data-dir (NEXTREC_DATA_DIR)`,
    );
    expect(second.stderr).not.toMatch(/Conflicting lock|\.duckdb|at .*\.js:\d+/);
    expect(second.stdout).not.toContain('operator key');
  });

  it('names --port when the port is taken, and shows no operator key for a run that never listened', async () => {
    const port = new URL(daemon.url).port;
    const dir = tempDataDir();
    dirs.push(dir);
    const busy = await nextrec(['serve', '--port', port, '--data-dir', dir]);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toContain(
      `port ${port} on 127.0.0.1 is already in use; choose another with --port (NEXTREC_PORT)`,
    );
    expect(busy.stdout).not.toContain('operator key');
    expect(existsSync(path.join(dir, 'admin.key'))).toBe(false);
    // The next run that listens generates the key and shows it.
    const started = await startDaemonProcess({ dataDir: dir, env: { NEXTREC_ADMIN_KEY: '' } });
    try {
      expect(started.output()).toMatch(/operator key \(also in .*admin\.key, shown once\): nradm_/);
      expect(existsSync(path.join(dir, 'admin.key'))).toBe(true);
    } finally {
      await started.stop();
    }
  });
});

describe('a daemon given a PostgreSQL store', () => {
  it("refuses a URL that is not PostgreSQL's with exit code 2, without repeating it", async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const run = await nextrec([
      'serve',
      '--port',
      '0',
      '--data-dir',
      dir,
      '--store',
      'mysql://shop:s3cret@h/db',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the store must be a URL postgres://user:password@host:port/database');
    expect(run.stderr).not.toContain('s3cret');
  });

  it('names the server it cannot reach, never the password, and exits non-zero', async () => {
    const dir = tempDataDir();
    dirs.push(dir);
    const url = 'postgres://shop:s3cret@127.0.0.1:1/nextrec';
    const run = await nextrec(['serve', '--port', '0', '--data-dir', dir, '--store', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot open the PostgreSQL store at 127.0.0.1:1/nextrec');
    expect(`${run.stdout}${run.stderr}`).not.toContain('s3cret');
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

describe('the embeddings helper', () => {
  it('alone (`embeddings serve`) names its --port when the port is taken, shows no key and closes the store', async () => {
    const port = new URL(daemon.url).port;
    const dir = tempDataDir();
    dirs.push(dir);
    const busy = await nextrec(['embeddings', 'serve', '--port', port, '--data-dir', dir]);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toContain(
      `port ${port} on 127.0.0.1 is already in use; choose another with --port (NEXTREC_EMBEDDINGS_PORT)`,
    );
    expect(busy.stderr).not.toMatch(/listen EADDRINUSE|at .*\.js:\d+/);
    expect(busy.stdout).not.toContain('operator key');
    expect(existsSync(path.join(dir, 'admin.key'))).toBe(false);
    // A store closed is checkpointed: no write-ahead log is left beside it.
    expect(existsSync(path.join(dir, 'nextrec.duckdb'))).toBe(true);
    expect(existsSync(path.join(dir, 'nextrec.duckdb.wal'))).toBe(false);
  });

  it('is not served with --no-embeddings', async () => {
    const alone = await startDaemonProcess({ args: ['--no-embeddings'] });
    try {
      expect(alone.output()).not.toContain('embeddings helper listening');
      expect((await fetch(`${alone.url}/health`)).status).toBe(200);
    } finally {
      await alone.stop();
      removeDataDir(alone.dataDir);
    }
  });
});
