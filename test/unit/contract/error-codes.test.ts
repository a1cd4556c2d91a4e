import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../../src/contract/errors.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? sources(file) : file.endsWith('.ts') ? [file] : [];
  });
}

describe('error codes', () => {
  const code = Object.keys(ERROR_STATUS);
  const definitions = path.join(ROOT, 'src/contract/errors.ts');
  const source = sources(path.join(ROOT, 'src'))
    .filter((file) => file !== definitions)
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  // The rows of the errors table in docs/errors.md: `| status | codes | when |`.
  const rows = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8')
    .split('\n')
    .filter((line) => /^\|\s*\d{3}\s*\|/.test(line))
    .map((line) => {
      const [status, codes] = line.split('|').slice(1, 3);
      return { status: Number(status.trim()), codes: [...codes.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]) };
    });

  it.each(code)('%s is answered somewhere and documented in docs/errors.md with its status', (name) => {
    expect(source).toContain(`'${name}'`);
    const row = rows.find((each) => each.codes.includes(name));
    expect(row, `docs/errors.md has a row for ${name}`).toBeDefined();
    expect(row!.status).toBe(ERROR_STATUS[name as keyof typeof ERROR_STATUS]);
  });

  it('documents no code that does not exist', () => {
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.flatMap((row) => row.codes).filter((name) => !(name in ERROR_STATUS))).toEqual([]);
  });
});
