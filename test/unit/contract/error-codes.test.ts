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
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

  it.each(code)('%s is answered somewhere and documented in the README with its status', (name) => {
    expect(source).toContain(`'${name}'`);
    const row = readme.split('\n').find((line) => line.startsWith('|') && line.includes(`\`${name}\``));
    expect(row, `README "Errors" has a row for ${name}`).toBeDefined();
    expect(row).toContain(String(ERROR_STATUS[name as keyof typeof ERROR_STATUS]));
  });
});
