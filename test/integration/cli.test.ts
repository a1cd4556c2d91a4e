import { execFile, spawn } from 'node:child_process';
import { promisify, stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';
import {
  BIN,
  OPERATOR_KEY,
  call,
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  tenantHeaders,
} from '../support/daemon-process.js';

const run = promisify(execFile);
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDataDir));

/** Runs the CLI; its output is compared without colours (oclif colours warnings when the environment asks it to). */
async function nextrec(args: string[], dataDir?: string) {
  const plain = <T extends { stdout?: unknown; stderr?: unknown }>(r: T): T => {
    if (typeof r.stdout === 'string') r.stdout = stripVTControlCharacters(r.stdout);
    if (typeof r.stderr === 'string') r.stderr = stripVTControlCharacters(r.stderr);
    return r;
  };
  try {
    return plain(
      await run(process.execPath, [BIN, ...args, ...(dataDir ? ['--data-dir', dataDir] : [])], {
        env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY },
      }),
    );
  } catch (error) {
    throw plain(error as { stdout?: unknown; stderr?: unknown });
  }
}

describe('nextrec CLI', () => {
  it('issues bearer tokens and sets rate limits beside a running daemon', async () => {
    const daemon = await startDaemonProcess();
    dirs.push(daemon.dataDir);
    try {
      const created = await nextrec(['tenant', 'create', 'acme'], daemon.dataDir);
      const acme = JSON.parse(created.stdout);
      // Issued while the command ran, however long it took to start: it expires an hour after that (and
      // not while the commands below run, however busy the machine).
      const before = Date.now();
      const issued = JSON.parse(
        (await nextrec(['token', 'issue', '--tenant', 'acme', '--ttl', '60m'], daemon.dataDir)).stdout,
      );
      const expiresAt = Date.parse(issued.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before - 1_000 + 3_600_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 1_000 + 3_600_000);
      const bearer = { 'x-tenant-id': 'acme', authorization: `Bearer ${issued.token}` };
      expect((await call(daemon.url, 'GET', '/catalog/items', { headers: bearer })).status).toBe(200);
      await expect(
        nextrec(['token', 'issue', '--tenant', 'acme', '--ttl', 'soon'], daemon.dataDir),
      ).rejects.toMatchObject({
        code: 2,
      });
      await expect(nextrec(['token', 'issue', '--tenant', 'nobody'], daemon.dataDir)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining("tenant 'nobody' does not exist"),
      });

      const limits = await nextrec(['tenant', 'rate-limits', 'acme', '--jwt', '3'], daemon.dataDir);
      expect(JSON.parse(limits.stdout)).toEqual({ jwt: 3 });
      const answers = [];
      for (let i = 0; i < 4; i++)
        answers.push(await call(daemon.url, 'GET', '/catalog/items', { headers: bearer }));
      expect(answers.slice(0, 3).map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(answers[3].status).toBe(429);
      expect(answers[3].body).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED' });
      const retryAfter = Number(answers[3].headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // The budget is per credential: the API key is not limited.
      expect((await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(acme) })).status).toBe(
        200,
      );
      expect(JSON.parse((await nextrec(['tenant', 'rate-limits', 'acme'], daemon.dataDir)).stdout)).toEqual(
        {},
      );
      expect((await call(daemon.url, 'GET', '/catalog/items', { headers: bearer })).status).toBe(200);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('creates, lists and rotates tenants on the store when no daemon runs; the daemon then accepts them', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const created = JSON.parse((await nextrec(['tenant', 'create', 'offline'], dataDir)).stdout);
    expect(created).toEqual({
      tenantId: 'offline',
      apiKey: expect.any(String),
      privateToken: expect.any(String),
      publicToken: expect.any(String),
    });
    await expect(nextrec(['tenant', 'create', 'offline'], dataDir)).rejects.toMatchObject({
      stderr: expect.stringContaining('already exists'),
    });
    await expect(nextrec(['tenant', 'create', 'bad id!'], dataDir)).rejects.toMatchObject({ code: 2 });
    const rotated = JSON.parse(
      (await nextrec(['tenant', 'rotate', 'offline', '--key', 'api'], dataDir)).stdout,
    );
    expect(Object.keys(rotated).sort()).toEqual(['apiKey', 'tenantId']);
    expect(rotated.apiKey).not.toBe(created.apiKey);
    expect(JSON.parse((await nextrec(['tenant', 'list'], dataDir)).stdout)).toEqual({ tenants: ['offline'] });

    const daemon = await startDaemonProcess({ dataDir });
    try {
      const old = await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(created) });
      expect(old.status).toBe(401);
      const current = await call(daemon.url, 'GET', '/catalog/items', {
        headers: tenantHeaders({ ...created, apiKey: rotated.apiKey }),
      });
      expect(current.status).toBe(200);
    } finally {
      await daemon.stop();
    }
  });

  it('goes through the running daemon, which holds the store', async () => {
    const daemon = await startDaemonProcess();
    dirs.push(daemon.dataDir);
    try {
      const created = JSON.parse((await nextrec(['tenant', 'create', 'online'], daemon.dataDir)).stdout);
      // The daemon knows the tenant at once: it made it.
      const items = await call(daemon.url, 'GET', '/catalog/items', { headers: tenantHeaders(created) });
      expect(items.status).toBe(200);
      expect(JSON.parse((await nextrec(['tenant', 'list'], daemon.dataDir)).stdout)).toEqual({
        tenants: ['online'],
      });
      const rotated = JSON.parse(
        (await nextrec(['tenant', 'rotate', 'online', '--key', 'public'], daemon.dataDir)).stdout,
      );
      expect(rotated.publicToken).not.toBe(created.publicToken);
      await expect(
        nextrec(['tenant', 'rotate', 'missing', '--key', 'api'], daemon.dataDir),
      ).rejects.toMatchObject({
        stderr: expect.stringContaining('does not exist'),
      });
    } finally {
      await daemon.stop();
    }
  });
});

/** The names listed under a heading of oclif's help (TOPICS, COMMANDS), wrapped lines left out. */
function listed(help: string, heading: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) return [];
  const end = lines.indexOf('', start);
  return lines
    .slice(start + 1, end < 0 ? undefined : end)
    .filter((line) => /^ {2}\S/.test(line))
    .map((line) => line.trim().split(/\s+/)[0]);
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ');
const IDS = Object.keys(COMMANDS) as (keyof typeof COMMANDS)[];

/** Runs the CLI in a pseudo-terminal (util-linux `script`), answering its first question. */
function inTerminal(args: string[], answer: string): Promise<{ output: string; code: number | null }> {
  const command = [process.execPath, BIN, ...args].map((arg) => `'${arg}'`).join(' ');
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  let answered = false;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (!answered && stripVTControlCharacters(output).includes('?')) {
      answered = true;
      child.stdin.write(`${answer}\r`);
    }
  });
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      child.stdin.end();
      resolve({ output: stripVTControlCharacters(output), code });
    }),
  );
}

describe('nextrec help', () => {
  it('lists every topic and top-level command, and nothing else', async () => {
    const { stdout } = await nextrec(['--help']);
    const topics = [...new Set(IDS.filter((id) => id.includes(':')).map((id) => id.split(':')[0]))];
    expect(listed(stdout, 'TOPICS').sort()).toEqual(topics.sort());
    const commands = IDS.filter((id) => !id.includes(':'));
    expect(listed(stdout, 'COMMANDS').sort()).toEqual([...commands, 'help'].sort());
    expect(stdout).not.toMatch(/batch/i);
  });

  it('explains each command with `nextrec help <command>`, and a topic with `nextrec help <topic>`', async () => {
    const answers = await Promise.all(IDS.map((id) => nextrec(['help', ...id.split(':')])));
    IDS.forEach((id, i) => {
      const { summary, description } = COMMANDS[id];
      const help = oneLine(answers[i].stdout);
      expect(help).toContain(`$ nextrec ${id.replaceAll(':', ' ')}`);
      expect(help).toContain(oneLine(summary ?? description!));
      expect(help).toContain('FLAGS');
    });
    const tenant = await nextrec(['help', 'tenant']);
    const tenantCommands = IDS.filter((id) => id.startsWith('tenant:'));
    expect(listed(tenant.stdout, 'COMMANDS')).toHaveLength(tenantCommands.length);
    for (const id of tenantCommands)
      expect(tenant.stdout).toMatch(new RegExp(`^ {2}${id.replace(':', ' ')} `, 'm'));
  });

  it('answers a command that does not exist with exit code 127 and where to look', async () => {
    await expect(nextrec(['servve'])).rejects.toMatchObject({
      code: 127,
      stderr: expect.stringMatching(/servve is not a nextrec command[\s\S]*Run nextrec help for a list/),
    });
    await expect(nextrec(['help', 'servve'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Command servve not found'),
    });
  });

  it('asks "did you mean" in a terminal', async () => {
    const { output, code } = await inTerminal(['servve'], 'n');
    expect(output).toContain('Did you mean serve?');
    expect(output).toContain('Run nextrec help for a list of available commands');
    expect(code).toBe(127);
  });
});
