import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const MEMORY = new URL('../../../dist/src/state/memory.js', import.meta.url).href;

/**
 * Whether an object made at an allocation site, after a million objects of that site outlived young
 * collections, starts in the young generation (a process of its own, which V8's natives can ask).
 */
function startsYoung(tuned: boolean): boolean {
  const script = `
    import { tuneV8ForServing } from ${JSON.stringify(MEMORY)};
    if (${tuned}) tuneV8ForServing();
    const kept = [];
    const make = (i) => ({ id: i, inner: { id: i } });
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 100000; i++) kept.push(make(i));
      if (kept.length >= 1000000) kept.length = 0;
    }
    console.log(%InYoungGeneration(make(-1)));`;
  const printed = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  return printed.trim() === 'true';
}

/**
 * The concurrent marking tasks a thread started after the settings ran while it filled and dropped an old
 * generation of a few hundred MB, by the numbers V8 gave them (a process of its own, which traces them).
 */
function markingTasksOfAThread(tuned: boolean): number[] {
  const thread = `
    const kept = [];
    for (let round = 0; round < 40; round++) {
      const batch = [];
      for (let i = 0; i < 200000; i++) batch.push({ i, inner: { i } });
      kept.push(batch);
      if (kept.length > 15) kept.shift();
    }`;
  const script = `
    import { Worker } from 'node:worker_threads';
    import { tuneV8ForServing } from ${JSON.stringify(MEMORY)};
    if (${tuned}) tuneV8ForServing();
    const worker = new Worker(${JSON.stringify(thread)}, { eval: true });
    await new Promise((resolve) => worker.once('exit', resolve));`;
  const printed = execFileSync(
    process.execPath,
    ['--trace-concurrent-marking', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  return [...printed.matchAll(/concurrent marking task (\d+)/g)].map((match) => Number(match[1]));
}

describe("V8's settings for serving", () => {
  it('mark a thread started after them with one helper thread at a time, where V8 takes several', () => {
    const tuned = markingTasksOfAThread(true);
    expect(tuned.length).toBeGreaterThan(0);
    expect(new Set(tuned)).toEqual(new Set([1]));
    expect(Math.max(...markingTasksOfAThread(false))).toBeGreaterThan(1);
  });

  it('keep the objects of a site whose objects outlived young collections young (no pretenuring)', () => {
    // Without the setting V8 mostly allocates them in the old generation from then on (its heuristic,
    // which this test does not assert: Node 20 and 24 did here, and one CI run of Node 24 did not).
    expect(startsYoung(true)).toBe(true);
  });
});
