import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { currentVersion, modelDir } from '../../../src/artifacts/layout.js';
import { appendInteractions } from '../../../src/ingestion/events.js';
import { quickBuildRunner } from '../../../src/models/quick-builds.js';
import { exportTenantLake } from '../../../src/store/lake-export.js';
import { openRuntime } from '../../../src/runtime.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';
import { duckDbStoreOf } from '../../support/store-file.js';

/** The process as the daemon runs it: compiled (npm test builds before it runs the tests). */
const COMPILED_SCRIPT = new URL('../../../dist/jobs/quick-build-process.js', import.meta.url);

let folder: string;
beforeEach(() => (folder = mkdtempSync(path.join(tmpdir(), 'nextrec-quick-'))));
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const signal = () => new AbortController().signal;

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A stand-in for the quick build process: it appends `<pid> <tenant> <models>` to a report for each
 * request, and answers as `answer` (a function body of `request`) says.
 */
function fakeRunner(answer: string, idleMs = 60_000) {
  const report = path.join(folder, 'requests.txt');
  const script = path.join(folder, 'quick.mjs');
  writeFileSync(
    script,
    [
      "import { appendFileSync } from 'node:fs';",
      "process.on('message', (request) => {",
      `  appendFileSync(${JSON.stringify(report)}, [process.pid, request.tenantId, request.models.join(',')].join(' ') + '\\n');`,
      `  ${answer}`,
      '});',
      "process.on('disconnect', () => process.exit(0));",
    ].join('\n'),
  );
  const requests = () =>
    existsSync(report)
      ? readFileSync(report, 'utf8')
          .trim()
          .split('\n')
          .map((line) => line.split(' '))
      : [];
  return { run: quickBuildRunner(folder, undefined, pathToFileURL(script), idleMs), requests };
}

describe('quickBuildRunner', () => {
  it('runs build after build in one process, resolving on each version and rejecting with a failure', async () => {
    const { run, requests } = fakeRunner(
      "process.send(request.tenantId === 'broken' ? { id: request.id, failure: 'no lake for broken' } : { id: request.id, versions: [1] });",
    );
    try {
      await run('a', ['cooccurrence'], signal());
      await run('b', ['cooccurrence', 'ease'], signal());
      await expect(run('broken', ['cooccurrence'], signal())).rejects.toThrow('no lake for broken');
      const seen = requests();
      expect(seen.map(([, tenant, models]) => [tenant, models])).toEqual([
        ['a', 'cooccurrence'],
        ['b', 'cooccurrence,ease'],
        ['broken', 'cooccurrence'],
      ]);
      expect(new Set(seen.map(([pid]) => pid)).size).toBe(1);
      expect(Number(seen[0][0])).not.toBe(process.pid);
    } finally {
      run.close?.();
    }
  });

  it('ends the process when a build is aborted, and starts another for the next build', async () => {
    // Answers nothing: the build would wait for ever.
    const { run, requests } = fakeRunner('');
    try {
      const controller = new AbortController();
      const stuck = run('a', ['cooccurrence'], controller.signal);
      await until(() => requests().length === 1);
      const first = Number(requests()[0][0]);
      controller.abort();
      await expect(stuck).rejects.toThrow('aborted');
      await until(() => !alive(first));
      void run('b', ['cooccurrence'], signal()).catch(() => undefined);
      await until(() => requests().length === 2);
      expect(Number(requests()[1][0])).not.toBe(first);
    } finally {
      run.close?.();
    }
  });

  it('fails the builds of a process that ended, and ends an idle one', async () => {
    const { run, requests } = fakeRunner(
      "if (request.tenantId === 'crash') process.exit(7); process.send({ id: request.id, versions: [1] });",
      300,
    );
    try {
      await expect(run('crash', ['cooccurrence'], signal())).rejects.toThrow('code 7');
      await run('a', ['cooccurrence'], signal());
      const [[crashed], [serving]] = requests();
      expect(serving).not.toBe(crashed);
      // Idle for 300 ms: it ends, giving its memory back.
      await until(() => !alive(Number(serving)));
    } finally {
      run.close?.();
    }
  });

  it('builds and publishes a tenant from its lake, as `nextrec build` does', async () => {
    const runtime = await openRuntime(folder);
    const run = quickBuildRunner(folder, undefined, COMPILED_SCRIPT);
    try {
      await createTenant(runtime, 'shop');
      const shop = runtime.state.get('shop')!;
      const views = (userId: string, items: string[]) =>
        items.map((itemId) => ({ userId, itemId, type: 'view' as const }));
      await appendInteractions(runtime, shop, [...views('u1', ['a', 'b']), ...views('u2', ['a', 'b'])]);
      await exportTenantLake(duckDbStoreOf(runtime.store), folder, 'shop');
      await run('shop', ['cooccurrence'], signal());
      const first = currentVersion(modelDir(folder, 'shop', 'cooccurrence'));
      expect(first).toBeDefined();
      // Again, in the same process and its DuckDB: a newer version.
      await run('shop', ['cooccurrence'], signal());
      expect(currentVersion(modelDir(folder, 'shop', 'cooccurrence'))).toBeGreaterThan(first!);
    } finally {
      run.close?.();
      await runtime.store.close();
    }
  });
});
