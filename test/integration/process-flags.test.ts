import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, removeDataDir, startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { missingProcessFlags, PROCESS_V8_FLAGS } from '../../src/state/memory.js';

const WARNING = 'started without the V8 flags of `nextrec serve`';
const ROOT = path.dirname(path.dirname(BIN));
const dataDirs: string[] = [];

afterAll(() => dataDirs.forEach(removeDataDir));

/** All it logged from its start to its stop (which writes out what was still buffered). */
async function logOf(launch: 'bin' | 'plain node'): Promise<string> {
  // The first line of bin/run.js finds node on the PATH: this one.
  const PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  const daemon: DaemonProcess = await startDaemonProcess({ launch, env: { PATH } });
  dataDirs.push(daemon.dataDir);
  expect(await daemon.stop()).toBe(0);
  return daemon.output();
}

describe("nextrec's V8 flags (docs/memory.md)", () => {
  it('are the ones bin/run.js starts node with, and npm start too', () => {
    const [firstLine] = readFileSync(BIN, 'utf8').split('\n');
    expect(firstLine).toBe(`#!/usr/bin/env -S node ${PROCESS_V8_FLAGS.join(' ')}`);
    const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.start).toBe(`exec node ${PROCESS_V8_FLAGS.join(' ')} bin/run.js serve --demo`);
    expect(missingProcessFlags([...PROCESS_V8_FLAGS, '--inspect'])).toEqual([]);
    expect(missingProcessFlags(['--inspect'])).toEqual([...PROCESS_V8_FLAGS]);
  });

  it('reach the daemon started as `nextrec serve`, which then warns of nothing', async () => {
    const log = await logOf('bin');
    expect(log).toMatch(/nextrec listening on/);
    expect(log).not.toContain(WARNING);
  });

  it('missing, make the daemon warn, naming them, and serve all the same', async () => {
    const log = await logOf('plain node');
    const warning = log.split('\n').find((line) => line.includes(WARNING));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, missing: [...PROCESS_V8_FLAGS] });
    expect(log).toMatch(/nextrec listening on/);
  });
});
