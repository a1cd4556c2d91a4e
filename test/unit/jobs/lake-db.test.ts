import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** The lake as jobs run it: compiled (npm test builds before it runs the tests). */
const LAKE_DB = new URL('../../../dist/jobs/lake/lake-db.js', import.meta.url).href;

let temp: string;
beforeEach(() => (temp = mkdtempSync(path.join(tmpdir(), 'nextrec-lake-temp-'))));
afterEach(() => rmSync(temp, { recursive: true, force: true }));

/** Runs `body` in a process of its own whose temporary folder is `temp`; returns what it printed. */
function inProcess(body: string): string {
  const script = `import { LakeDb } from ${JSON.stringify(LAKE_DB)};\n${body}`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: temp },
  });
}

describe('the lake of a job', () => {
  it('spills to a folder of its own per lake, removed when closed', () => {
    const printed = inProcess(
      [
        'const [a, b] = await Promise.all([LakeDb.scratch(), LakeDb.scratch()]);',
        "const { readdirSync } = await import('node:fs');",
        'console.log(readdirSync(process.env.TMPDIR).length);',
        'a.close();',
        'b.close();',
      ].join('\n'),
    );
    expect(printed.trim()).toBe('2');
    expect(readdirSync(temp)).toEqual([]);
  });

  it('removes the spill folders of the lakes still open when its process exits', () => {
    expect(() => inProcess('await LakeDb.scratch();\nprocess.exit(3);')).toThrow();
    expect(readdirSync(temp)).toEqual([]);
  });
});
