import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The documentation holds together: every relative link of README.md and docs/*.md leads to a file that
 * exists and, with a `#fragment`, to a heading of it (GitHub's anchors); and every place the source cites
 * a document (`docs/memory.md`, `docs/guide.md, "Credentials"`) names a document, and a heading of it,
 * that exist.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const DOCUMENTS = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks, with inline code left out too. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces made hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

function headings(file: string): string[] {
  const markdown = readFileSync(path.join(ROOT, file), 'utf8').replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  return [...markdown.matchAll(/^#{1,6} +(.+?) *#*$/gm)].map((match) => match[1]);
}

/** The anchors of a document's headings, repeated headings numbered as GitHub numbers them. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(file)) {
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** Every relative link of a document: its target as written and the file it leads to from the root. */
function relativeLinks(file: string): { target: string; resolved: string; fragment?: string }[] {
  const text = prose(readFileSync(path.join(ROOT, file), 'utf8'));
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => {
      const [pathPart, fragment] = target.split('#');
      const resolved = pathPart
        ? path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(pathPart)))
        : file;
      return { target, resolved, fragment };
    });
}

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(path.join(ROOT, file)).isDirectory()
      ? sources(file)
      : /\.(ts|js|mjs)$/.test(name)
        ? [file]
        : [];
  });
}

describe('the documentation', () => {
  it('has the documents the README links to', () => {
    expect(DOCUMENTS).toEqual(
      expect.arrayContaining([
        'docs/guide.md',
        'docs/errors.md',
        'docs/configuration.md',
        'docs/production.md',
        'docs/batch-models.md',
        'docs/memory.md',
        'docs/benchmarks.md',
      ]),
    );
    expect(relativeLinks('README.md').map((link) => link.resolved)).toEqual(
      expect.arrayContaining(DOCUMENTS.filter((file) => file !== 'README.md')),
    );
  });

  it('keeps the README a landing page of at most 300 lines', () => {
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(301);
  });

  it.each(DOCUMENTS)('%s: every relative link leads to a file and a heading that exist', (file) => {
    const links = relativeLinks(file);
    const broken = links.filter(({ resolved, fragment }) => {
      if (!existsSync(path.join(ROOT, resolved))) return true;
      if (fragment === undefined) return false;
      return !resolved.endsWith('.md') || !anchors(resolved).has(fragment);
    });
    expect(broken.map((link) => link.target)).toEqual([]);
  });

  it('sees a broken link as broken', () => {
    expect(DOCUMENTS.flatMap(relativeLinks).length).toBeGreaterThan(50);
    expect(anchors('README.md').has('quick-start')).toBe(true);
    expect(anchors('README.md').has('quick-start-2')).toBe(false);
    expect(anchors('docs/guide.md').has('scenarios-rules-and-segmentations')).toBe(true);
    expect(slug('Projection, geo ranking and caching')).toBe('projection-geo-ranking-and-caching');
    expect(slug('`bench/serve`: the 2 routes')).toBe('benchserve-the-2-routes');
  });

  it('is cited by the source only where the cited document and heading exist', () => {
    const cites = ['src', 'jobs', 'bench', 'test', 'scripts', 'dashboard'].flatMap((dir) =>
      sources(dir).flatMap((file) => {
        const text = readFileSync(path.join(ROOT, file), 'utf8');
        return [
          ...text.matchAll(
            /\b((?:docs\/[\w-]+|README)\.md)\b(?:,\s*(?:(?:\*|\/\/|#) ?)?\s*"((?:[^"\\\n]|\n\s*(?:\*|\/\/)?\s*)+)")?/g,
          ),
        ].map((match) => ({
          file,
          document: match[1],
          heading: match[2]?.replace(/\s*\n\s*(?:\*|\/\/)?\s*/g, ' '),
        }));
      }),
    );
    expect(cites.length).toBeGreaterThan(150);
    const wrong = cites.filter(
      ({ document, heading }) =>
        !existsSync(path.join(ROOT, document)) ||
        (heading !== undefined && !headings(document).includes(heading)),
    );
    expect(wrong.map(({ file, document, heading }) => `${file}: ${document} ${heading ?? ''}`)).toEqual([]);
    // No citation of a README section that moved to docs/.
    const stale = ['src', 'jobs', 'bench', 'test'].flatMap((dir) =>
      sources(dir).filter((file) =>
        /README,?\s*(?:\*\s*)?"/.test(readFileSync(path.join(ROOT, file), 'utf8')),
      ),
    );
    expect(stale).toEqual([]);
  });
});
