// An ESLint rule: no file imports itself around a circle of relative imports, type imports included
// (`import type`, `export type … from`, `import('…').T`). import-x's `no-cycle` leaves type imports out;
// here they count, since a type a lower file takes from a higher one ties the two as much as a value does.
// The graph is read with TypeScript's import scanner (no type checking), each file once per process.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * A file's relative imports, resolved (a `.js` specifier names the `.ts` file beside it), with the
 * modification time they were read at, checked again once a second at most (an editor lints for long).
 */
const cache = new Map();
const RECHECK_MS = 1000;

function resolve(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.resolve(path.dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

function importsOfText(file, text) {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return [...new Set(importedFiles.map(({ fileName }) => resolve(file, fileName)).filter(Boolean))];
}

function importsOf(file) {
  const known = cache.get(file);
  const now = Date.now();
  if (known && now - known.checked < RECHECK_MS) return known.imports;
  let mtime;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    return [];
  }
  if (known?.mtime === mtime) {
    known.checked = now;
    return known.imports;
  }
  const imports = /\.[cm]?[jt]s$/.test(file) ? importsOfText(file, readFileSync(file, 'utf8')) : [];
  cache.set(file, { mtime, checked: now, imports });
  return imports;
}

/** The shortest chain of imports from `start` back to `file`, or undefined when there is none. */
function pathBack(start, file) {
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const next of importsOf(queue[i])) {
      if (previous.has(next)) continue;
      previous.set(next, queue[i]);
      if (next === file) {
        const chain = [];
        for (let at = file; at !== undefined; at = previous.get(at)) chain.unshift(at);
        return chain;
      }
      queue.push(next);
    }
  }
  return undefined;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'forbid import cycles, type imports included' },
    schema: [],
    messages: { cycle: 'import cycle: {{chain}}' },
  },
  create(context) {
    const file = context.physicalFilename;
    const root = context.cwd;
    const check = (node, specifier) => {
      if (typeof specifier !== 'string') return;
      const target = resolve(file, specifier);
      if (!target) return;
      const chain = target === file ? [file] : pathBack(target, file);
      if (!chain) return;
      const names = [file, ...chain].map((at) => path.relative(root, at));
      context.report({ node, messageId: 'cycle', data: { chain: names.join(' → ') } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      TSImportType: (node) => {
        const literal = node.argument?.literal ?? node.argument;
        if (literal?.type === 'Literal') check(node, literal.value);
      },
    };
  },
};
