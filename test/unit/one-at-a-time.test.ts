import { describe, expect, it } from 'vitest';
import { OneAtATimePerKey } from '../../src/one-at-a-time.js';

/** A piece of work that records its start and ends when `finish` is called. */
function gated(log: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    work: async () => {
      log.push(`${name} started`);
      await done;
      log.push(`${name} ended`);
    },
    finish: () => finish(),
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('OneAtATimePerKey', () => {
  it("runs one key's work in order, one piece at a time, beside other keys' work", async () => {
    const lines = new OneAtATimePerKey();
    const log: string[] = [];
    const big1 = gated(log, 'big 1');
    const big2 = gated(log, 'big 2');
    const small = gated(log, 'small');
    const runs = [lines.run('big', big1.work), lines.run('big', big2.work), lines.run('small', small.work)];
    await tick();
    // The small key's work started while the big key's first piece still runs; its second waits.
    expect(log).toEqual(['big 1 started', 'small started']);
    small.finish();
    await runs[2];
    big1.finish();
    await runs[0];
    await tick();
    expect(log).toContain('big 2 started');
    let ended = false;
    const all = lines.ended().then(() => (ended = true));
    await tick();
    expect(ended).toBe(false);
    big2.finish();
    await all;
    expect(log).toEqual([
      'big 1 started',
      'small started',
      'small ended',
      'big 1 ended',
      'big 2 started',
      'big 2 ended',
    ]);
  });

  it('goes on after a piece that failed, and settles each piece as it settled', async () => {
    const lines = new OneAtATimePerKey();
    const failing = lines.run('a', async () => {
      throw new Error('no disk');
    });
    const next = lines.run('a', async () => 'next');
    await expect(failing).rejects.toThrow('no disk');
    await expect(next).resolves.toBe('next');
    await expect(lines.ended()).resolves.toBe(undefined);
  });
});
