import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDataDir, startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';

/**
 * The OpenAPI document a daemon serves at `/openapi.json` (docs/guide.md, "The HTTP API") against the one
 * committed in test/fixtures/openapi.json, operation by operation: where the descriptions of the routes
 * live in the source may change, what the daemon serves may not, unless on purpose. The package's
 * version is left out (a release changes it). After a deliberate change of the document, write the
 * fixture again from the daemon (`npm run build`, then `NEXTREC_WRITE_OPENAPI_SNAPSHOT=1 npx vitest run
 * <this file>` and `npx prettier --write test/fixtures/openapi.json`), and review its diff.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SNAPSHOT = path.join(ROOT, 'test/fixtures/openapi.json');

type Operations = Record<string, Record<string, unknown>>;
interface OpenApiDocument {
  info: { version?: string; [key: string]: unknown };
  paths: Operations;
  [key: string]: unknown;
}

/** The document without the package's version. */
function versionless(document: OpenApiDocument): OpenApiDocument {
  return { ...document, info: { ...document.info, version: '<version>' } };
}

function operationNames(paths: Operations): string[] {
  return Object.entries(paths)
    .flatMap(([route, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`))
    .sort();
}

let daemon: DaemonProcess;
let served: OpenApiDocument;
let committed: OpenApiDocument;

beforeAll(async () => {
  daemon = await startDaemonProcess();
  served = versionless((await (await fetch(`${daemon.url}/openapi.json`)).json()) as OpenApiDocument);
  if (process.env.NEXTREC_WRITE_OPENAPI_SNAPSHOT === '1') {
    writeFileSync(SNAPSHOT, `${JSON.stringify(served, null, 2)}\n`);
  }
  committed = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as OpenApiDocument;
});

afterAll(async () => {
  await daemon?.stop();
  if (daemon) removeDataDir(daemon.dataDir);
});

describe('the served OpenAPI document against test/fixtures/openapi.json', () => {
  it('has the same operations', () => {
    expect(operationNames(committed.paths).length).toBeGreaterThanOrEqual(80);
    expect(operationNames(served.paths)).toEqual(operationNames(committed.paths));
  });

  it('describes each operation as the snapshot does', () => {
    for (const [route, methods] of Object.entries(committed.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        expect.soft(served.paths[route]?.[method], `${method.toUpperCase()} ${route}`).toEqual(operation);
      }
    }
  });

  it('has the same document around the operations: info, tags, components', () => {
    const { paths: servedPaths, ...servedRest } = served;
    const { paths: committedPaths, ...committedRest } = committed;
    expect(Object.keys(servedPaths).length).toBe(Object.keys(committedPaths).length);
    expect(servedRest).toEqual(committedRest);
  });

  it('is the same JSON text, the order of keys included', () => {
    const [text, snapshot] = [JSON.stringify(served), JSON.stringify(committed)];
    let at = 0;
    while (at < text.length && text[at] === snapshot[at]) at++;
    const around = (json: string) => json.slice(Math.max(0, at - 120), at + 120);
    expect(at === text.length && at === snapshot.length ? undefined : around(text)).toBe(
      at === text.length && at === snapshot.length ? undefined : around(snapshot),
    );
  });
});
