import { readFileSync } from 'node:fs';

function packageVersion(): string {
  // src/version.ts runs from dist/src/, two levels below the package root either way.
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'nextrec' && pkg.version) return pkg.version;
    } catch {
      // not at this level
    }
  }
  return '0.0.0';
}

export const VERSION = packageVersion();
