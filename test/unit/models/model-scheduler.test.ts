import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendInteractions } from '../../../src/ingestion/events.js';
import { buildTenant } from '../../../jobs/build.js';
import type { ModelName } from '../../../src/artifacts/layout.js';
import { BUILD_NICENESS, BuildLauncher } from '../../../src/models/build-launcher.js';
import { DEFAULT_SCHEDULE, ModelScheduler, processBuildRunner } from '../../../src/models/model-scheduler.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';
import { DELTA_BATCH_ROOM, DELTA_ROWS_LIMIT } from '../../../src/vector/tenant-vectors.js';
import {
  SCHED_OTHER,
  schedulingIn,
  schedulingOf,
  withBuilds,
  type Scheduling,
} from '../../support/scheduling.js';
import { PATIENCE_MS } from '../../support/eventually.js';

let runtime: Runtime;
let scheduler: ModelScheduler;
let dir: string;

const quiet = { debug: () => undefined, error: () => undefined };
const views = (who: string, items: string[]) =>
  items.map((itemId) => ({ userId: who, itemId, type: 'view' as const }));

const built: string[][] = [];

async function setUp(
  schedule: Partial<typeof DEFAULT_SCHEDULE>,
  models: readonly ModelName[] = ['cooccurrence'],
  /** Whether this daemon runs the tenant's builds (default: it does). */
  claim?: (tenantId: string) => Promise<boolean>,
) {
  built.length = 0;
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-scheduler-'));
  runtime = await openRuntime(dir);
  await createTenant(runtime, 'shop');
  // The jobs run in this process here; the daemon runs them in one of their own.
  scheduler = new ModelScheduler(
    runtime.state,
    runtime.lake,
    runtime.loader,
    async (tenantId, chosen) => {
      built.push([...chosen]);
      await buildTenant(dir, tenantId, chosen, { threads: 1 });
    },
    () => models,
    { ...DEFAULT_SCHEDULE, debounceMs: 20, ...schedule },
    undefined,
    claim,
  );
  // The scheduler of the runtime stays idle; this one is told about commits by hand.
  scheduler.start(quiet);
  return runtime.state.get('shop')!;
}

/** Polls until `check` holds: builds, and the processes of the launcher's, take what a busy machine gives. */
async function until(check: () => boolean, ms = PATIENCE_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

afterEach(async () => {
  await scheduler.stop();
  await runtime.store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ModelScheduler', () => {
  it('rebuilds a small tenant shortly after its interactions are committed', async () => {
    const shop = await setUp({});
    await appendInteractions(runtime, shop, views('u1', ['a', 'b']));
    scheduler.interactionsCommitted(shop);
    await until(() => shop.neighbours.neighbours.length === 2);
    await appendInteractions(runtime, shop, views('u2', ['a', 'c']));
    scheduler.interactionsCommitted(shop);
    await until(() => shop.neighbours.interactionCount === 4);
    const a = shop.catalog.idOf('a');
    expect(shop.neighbours.rangeEnd(a) - shop.neighbours.rangeStart(a)).toBe(2);
  });

  it("builds nothing of a tenant whose builds another daemon runs, and builds once they are this one's", async () => {
    let claimed = false;
    const asked: string[] = [];
    const shop = await setUp({}, ['cooccurrence'], async (tenantId) => {
      asked.push(tenantId);
      return claimed;
    });
    await appendInteractions(runtime, shop, views('u1', ['a', 'b']));
    scheduler.interactionsCommitted(shop);
    await until(() => asked.length === 1);
    // The build was due and asked for: another daemon runs it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(built).toEqual([]);
    claimed = true;
    await appendInteractions(runtime, shop, views('u2', ['a', 'c']));
    scheduler.interactionsCommitted(shop);
    await until(() => shop.neighbours.interactionCount === 4);
    expect(built).toEqual([['cooccurrence']]);
    expect(asked.every((tenantId) => tenantId === 'shop')).toBe(true);
  });

  it('waits for the writes of a burst to pause before building, at most the longest debounce', async () => {
    const writeFor = async (shop: TenantState, ms: number) => {
      const end = Date.now() + ms;
      for (let n = 0; Date.now() < end; n++) {
        await appendInteractions(runtime, shop, views(`u${n}`, ['a', 'b']));
        scheduler.interactionsCommitted(shop);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    // The quiet time is long against a commit, so that a slow disk under a busy machine makes no pause.
    const shop = await setUp({ debounceMs: 500, maxDebounceMs: 60_000 });
    await writeFor(shop, 1500);
    expect(built).toEqual([]);
    await until(() => built.length === 1);
    await scheduler.stop();
    await runtime.store.close();
    rmSync(dir, { recursive: true, force: true });

    // A small tenant's writes that never pause are built once the longest debounce is over...
    const busy = await setUp({ debounceMs: 500, maxDebounceMs: 1000 });
    await writeFor(busy, 1500);
    expect(built.length).toBeGreaterThan(0);
    await scheduler.stop();
    await runtime.store.close();
    rmSync(dir, { recursive: true, force: true });

    // ...and a tenant that they make large waits for them to pause, up to its spacing.
    const growing = await setUp({
      debounceMs: 500,
      maxDebounceMs: 1000,
      smallTenantInteractions: 4,
      largeTenantSpacingMs: 60_000,
    });
    await writeFor(growing, 1500);
    expect(built).toEqual([]);
    await until(() => built.length === 1);
  });

  it('rebuilds a large tenant only when new interactions exceed the stale share, spaced apart', async () => {
    const shop = await setUp({ smallTenantInteractions: 0, staleShare: 0.5, largeTenantSpacingMs: 300 });
    await appendInteractions(runtime, shop, views('u1', ['a', 'b', 'c', 'd']));
    scheduler.interactionsCommitted(shop); // the empty model is stale: build
    await until(() => shop.neighbours.interactionCount === 4);
    const firstBuild = shop.neighbours.builtAt;

    await appendInteractions(runtime, shop, views('u2', ['a']));
    scheduler.interactionsCommitted(shop); // 1 new of 4: under half, no build
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(shop.neighbours.builtAt).toBe(firstBuild);

    await appendInteractions(runtime, shop, views('u2', ['b', 'c']));
    scheduler.interactionsCommitted(shop); // 3 new of 4: stale, built no sooner than 300 ms after the last
    await until(() => shop.neighbours.interactionCount === 7);
    expect(shop.neighbours.builtAt - firstBuild).toBeGreaterThanOrEqual(300);
  });

  it('builds the slower models in a lane of their own, at most once per spacing', async () => {
    // A spacing longer than what co-occurrence takes to follow the write below, also on a busy machine
    // (600 ms was not, beside two CPU-bound programs).
    const spacing = 5_000;
    const shop = await setUp({ slowModelSpacingMs: spacing }, ['cooccurrence', 'factors']);
    await appendInteractions(runtime, shop, [...views('u1', ['a', 'b', 'c']), ...views('u2', ['a', 'b'])]);
    scheduler.interactionsCommitted(shop);
    await until(() => shop.factors?.interactionCount === 5 && shop.neighbours.interactionCount === 5);
    expect(built).toContainEqual(['cooccurrence']);
    expect(built).toContainEqual(['factors']);
    const firstFactors = shop.factors!.builtAt;

    await appendInteractions(runtime, shop, views('u3', ['a', 'c']));
    scheduler.interactionsCommitted(shop);
    // Co-occurrence follows the write at once; factors wait out their spacing.
    await until(() => shop.neighbours.interactionCount === 7);
    expect(shop.factors!.interactionCount).toBe(5);
    await until(() => shop.factors!.interactionCount === 7);
    expect(shop.factors!.builtAt - firstFactors).toBeGreaterThanOrEqual(spacing);
  });

  it('ends the build in progress when it stops, without waiting for it or logging a failure', async () => {
    const shop = await setUp({});
    await scheduler.stop();
    const failures: object[] = [];
    let building = false;
    let ended = false;
    scheduler = new ModelScheduler(
      runtime.state,
      runtime.lake,
      runtime.loader,
      // A build that would never finish by itself.
      (_tenantId, _models, signal) =>
        new Promise((_resolve, reject) => {
          building = true;
          signal.addEventListener('abort', () => {
            ended = true;
            reject(new Error('ended'));
          });
        }),
      () => ['cooccurrence'],
      { ...DEFAULT_SCHEDULE, debounceMs: 20 },
    );
    scheduler.start({ debug: () => undefined, error: (details) => failures.push(details) });
    await appendInteractions(runtime, shop, views('u1', ['a', 'b']));
    scheduler.interactionsCommitted(shop);
    await until(() => building);
    await scheduler.stop();
    expect(ended).toBe(true);
    expect(failures).toEqual([]);
  });

  /** Replaces the scheduler of setUp with one whose builds go through `runner`. */
  async function schedulerWith(
    runner: ConstructorParameters<typeof ModelScheduler>[3],
    models: readonly ModelName[],
    schedule: Partial<typeof DEFAULT_SCHEDULE> = {},
  ): Promise<void> {
    await scheduler.stop();
    scheduler = new ModelScheduler(runtime.state, runtime.lake, runtime.loader, runner, () => models, {
      ...DEFAULT_SCHEDULE,
      debounceMs: 20,
      ...schedule,
    });
    scheduler.start(quiet);
  }

  it('skips a queued build that a build meanwhile caught up with, unless asked to rebuild', async () => {
    const shop = await setUp({});
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    await schedulerWith(
      async (tenantId, chosen) => {
        built.push([...chosen]);
        await gate;
        await buildTenant(dir, tenantId, chosen, { threads: 1 });
      },
      ['cooccurrence'],
    );
    await appendInteractions(runtime, shop, views('u1', ['a', 'b']));
    scheduler.interactionsCommitted(shop);
    await until(() => built.length === 1);
    // Told again while the build runs: the model is still behind, so the tenant is queued.
    scheduler.interactionsCommitted(shop);
    await new Promise((resolve) => setTimeout(resolve, 100));
    open();
    await until(() => shop.neighbours.interactionCount === 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(built).toHaveLength(1);
    scheduler.rebuild('shop');
    await until(() => built.length === 2);
  });

  it("builds small tenants' co-occurrence with the quick runner, never held back by a large tenant's build", async () => {
    const shop = await setUp({});
    await createTenant(runtime, 'big');
    const big = runtime.state.get('big')!;
    await scheduler.stop();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const byRunner: string[] = [];
    scheduler = new ModelScheduler(
      runtime.state,
      runtime.lake,
      runtime.loader,
      // The large tenants' runner: its build waits until the gate opens.
      async (tenantId, chosen) => {
        byRunner.push(`process ${tenantId}`);
        await gate;
        await buildTenant(dir, tenantId, chosen, { threads: 1 });
      },
      () => ['cooccurrence'],
      { ...DEFAULT_SCHEDULE, debounceMs: 20, smallTenantInteractions: 4 },
      async (tenantId, chosen) => {
        byRunner.push(`quick ${tenantId}`);
        await buildTenant(dir, tenantId, chosen, { threads: 1 });
      },
    );
    scheduler.start(quiet);
    await appendInteractions(runtime, big, [...views('u1', ['a', 'b']), ...views('u2', ['a', 'b'])]);
    scheduler.interactionsCommitted(big);
    await until(() => byRunner.includes('process big'));
    await appendInteractions(runtime, shop, views('u1', ['a', 'b']));
    scheduler.interactionsCommitted(shop);
    // The small tenant's model is built while the large one's build still waits.
    await until(() => shop.neighbours.interactionCount === 2);
    expect(big.neighbours.interactionCount).toBe(0);
    expect(byRunner).toEqual(['process big', 'quick shop']);
    open();
    await until(() => big.neighbours.interactionCount === 4);
  });

  const D = 384;

  /** A vectors base of 100 items, built now. */
  function justBuiltBase(shop: TenantState): void {
    shop.replaceVectorBase({
      version: 1,
      builtAt: Date.now(),
      model: 'hashing',
      externalIds: Array.from({ length: 100 }, (_, i) => `v${i}`),
      hashes: new Uint32Array(100),
      matrix: new Float32Array(100 * D).fill(1 / Math.sqrt(D)),
      indexFiles: {},
    });
  }

  it('builds the vectors at once when items wait for them, however few against the base', async () => {
    const shop = await setUp({});
    // The base below was just built: without waiting items, the next build would wait out the spacing.
    await schedulerWith(async (_tenantId, chosen) => void built.push([...chosen]), ['vectors'], {
      slowModelSpacingMs: 60_000,
    });
    justBuiltBase(shop);
    // Five new rows against a base of 100: under the stale share.
    const fresh = Array.from({ length: 5 }, (_, i) => `w${i}`);
    shop.setVectors(fresh, new Float32Array(5 * D).fill(1 / Math.sqrt(D)), Uint32Array.of(1, 2, 3, 4, 5));
    scheduler.vectorsChanged(shop);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(built).toEqual([]);
    // One item left for the build (the delta was full) has no vector at all: build.
    shop.vectors.awaitingBuild.add(shop.catalog.ensureId('x0'));
    scheduler.vectorsChanged(shop);
    await until(() => built.length === 1);
    expect(built[0]).toEqual(['vectors']);
  });

  it('builds the vectors at once when the delta has less room left than a batch', async () => {
    const shop = await setUp({});
    await schedulerWith(async (_tenantId, chosen) => void built.push([...chosen]), ['vectors'], {
      slowModelSpacingMs: 60_000,
      staleShare: 1_000,
    });
    // A base just built, and far more new rows than the stale share would take.
    justBuiltBase(shop);
    const rows = DELTA_ROWS_LIMIT - DELTA_BATCH_ROOM;
    const unit = new Float32Array(rows * D).fill(1 / Math.sqrt(D));
    const ids = Array.from({ length: rows }, (_, i) => `d${i}`);
    shop.setVectors(ids, unit, new Uint32Array(rows));
    scheduler.vectorsChanged(shop);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(built).toEqual([]);
    shop.setVectors(['one-more'], unit.slice(0, D), Uint32Array.of(1));
    scheduler.vectorsChanged(shop);
    await until(() => built.length === 1);
  });
});

/** The launcher as the daemon runs it: compiled (npm test builds before it runs the tests). */
const COMPILED_LAUNCHER = new URL('../../../dist/src/models/build-launcher-process.js', import.meta.url);

describe('processBuildRunner', () => {
  let folder: string;
  beforeEach(() => (folder = mkdtempSync(path.join(tmpdir(), 'nextrec-runner-'))));
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  /** A runner of `source` as the build script, through a launcher of its own. */
  function runnerOf(source: string, spareCpu = true) {
    const script = path.join(folder, 'build.mjs');
    writeFileSync(script, source);
    return processBuildRunner(
      folder,
      undefined,
      pathToFileURL(script),
      new BuildLauncher(spareCpu, BUILD_NICENESS, COMPILED_LAUNCHER),
    );
  }

  it('resolves when the build process exits with 0, and rejects with what it wrote to stderr otherwise', async () => {
    await expect(
      runnerOf('process.exit(0);\n')('shop', ['ease'], new AbortController().signal),
    ).resolves.toBe(undefined);
    const failing = runnerOf("process.stderr.write('no lake for shop\\n'); process.exit(3);\n");
    await expect(failing('shop', ['ease'], new AbortController().signal)).rejects.toThrow('no lake for shop');
    const silent = runnerOf('process.exit(4);\n');
    await expect(silent('shop', ['ease'], new AbortController().signal)).rejects.toThrow('code 4');
  });

  it('gives the build its data dir, tenant and models as arguments', async () => {
    const report = path.join(folder, 'arguments.json');
    const run = runnerOf(
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(report)}, JSON.stringify(process.argv.slice(2)));\n`,
    );
    await run('shop', ['ease', 'factors'], new AbortController().signal);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toEqual([folder, 'shop', 'ease,factors']);
  });

  it('ends the build process when its signal aborts', async () => {
    const ready = path.join(folder, 'ready.txt');
    const report = path.join(folder, 'ended.txt');
    const run = runnerOf(
      [
        "import { writeFileSync } from 'node:fs';",
        `process.on('SIGTERM', () => { writeFileSync(${JSON.stringify(report)}, 'ended'); process.exit(1); });`,
        `writeFileSync(${JSON.stringify(ready)}, 'ready');`,
        'setInterval(() => undefined, 1000);',
      ].join('\n'),
    );
    const controller = new AbortController();
    const build = run('shop', ['ease'], controller.signal);
    await until(() => existsSync(ready), 10_000);
    controller.abort();
    await expect(build).rejects.toMatchObject({ name: 'AbortError' });
    await until(() => existsSync(report));
    expect(readFileSync(report, 'utf8')).toBe('ended');
  });

  it('runs the build process, each of its threads, at the lowest CPU priority, leaving the daemon its own', async () => {
    const report = path.join(folder, 'priority.json');
    // Field 19 of a thread's stat line is its niceness (Linux, where the tests run).
    const run = runnerOf(
      [
        "import { readdirSync, readFileSync, writeFileSync } from 'node:fs';",
        "const nice = (task) => Number(readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1].split(' ')[16]);",
        "const tasks = readdirSync('/proc/self/task');",
        `writeFileSync(${JSON.stringify(report)}, JSON.stringify(tasks.map(nice)));`,
      ].join('\n'),
    );
    const before = getPriority();
    await run('shop', ['ease'], new AbortController().signal);
    const niceness = JSON.parse(readFileSync(report, 'utf8')) as number[];
    expect(niceness.length).toBeGreaterThan(1);
    expect(new Set(niceness)).toEqual(new Set([BUILD_NICENESS]));
    expect(getPriority()).toBe(before);
  });

  it('keeps each build thread off the first CPU the daemon may use, under SCHED_IDLE, when it has several, unless told not to', async () => {
    const report = path.join(folder, 'cpus.json');
    const source = [
      "import { readdirSync, readFileSync, writeFileSync } from 'node:fs';",
      `const schedulingIn = ${schedulingIn.toString()};`,
      "const threads = readdirSync('/proc/self/task').map((task) => schedulingIn(`/proc/self/task/${task}`, readFileSync));",
      `writeFileSync(${JSON.stringify(report)}, JSON.stringify(threads));`,
    ].join('\n');
    const own = schedulingOf('/proc/self');
    const allowed = own.cpus;
    const buildThreads = async (spareCpu: boolean) => {
      await runnerOf(source, spareCpu)('shop', ['ease'], new AbortController().signal);
      const threads = JSON.parse(readFileSync(report, 'utf8')) as Scheduling[];
      expect(threads.length).toBeGreaterThan(1);
      return threads;
    };
    for (const thread of await buildThreads(true)) expect(thread).toEqual(withBuilds(allowed));
    for (const thread of await buildThreads(false))
      expect(thread).toEqual({ cpus: allowed, policy: SCHED_OTHER });
    expect(schedulingOf('/proc/self')).toEqual(own);
  });

  it('puts a thread of the daemon with the builds when they keep off a CPU, leaving the others where they were', async () => {
    const allowed = schedulingOf('/proc/self').cpus;
    // A thread that says its Linux thread id, then waits.
    const worker = new Worker(
      "const { parentPort } = require('node:worker_threads'); parentPort.postMessage(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()); setInterval(() => undefined, 1000);",
      { eval: true },
    );
    const launcher = new BuildLauncher(true, BUILD_NICENESS, COMPILED_LAUNCHER);
    try {
      const tid = await new Promise<string>((resolve) => worker.once('message', resolve));
      const others = readdirSync('/proc/self/task').filter((task) => task !== tid);
      const before = others.map((task) => schedulingOf(`/proc/self/task/${task}`));
      launcher.keepWithBuilds(Number(tid));
      const expected = withBuilds(allowed);
      await until(() => JSON.stringify(schedulingOf(`/proc/self/task/${tid}`)) === JSON.stringify(expected));
      others.forEach((task, i) => {
        if (existsSync(`/proc/self/task/${task}`))
          expect(schedulingOf(`/proc/self/task/${task}`)).toEqual(before[i]);
      });
    } finally {
      launcher.close();
      await worker.terminate();
    }
  });

  it('gives each build a temporary folder of its own, removed when the build ends, a killed one too', async () => {
    const report = path.join(folder, 'temp.txt');
    const leaving = (ending: string) =>
      runnerOf(
        [
          "import { appendFileSync, writeFileSync } from 'node:fs';",
          "import { tmpdir } from 'node:os';",
          "import path from 'node:path';",
          "writeFileSync(path.join(tmpdir(), 'spilled.bin'), 'x'.repeat(1000));",
          `appendFileSync(${JSON.stringify(report)}, tmpdir() + '\\n');`,
          ending,
        ].join('\n'),
      );
    const signal = new AbortController().signal;
    await leaving('process.exit(0);')('shop', ['ease'], signal);
    // Killed as the kernel kills a process out of memory: it removes nothing itself.
    await expect(leaving("process.kill(process.pid, 'SIGKILL');")('shop', ['ease'], signal)).rejects.toThrow(
      'SIGKILL',
    );
    const temps = readFileSync(report, 'utf8').trim().split('\n');
    expect(temps).toHaveLength(2);
    expect(temps[0]).not.toBe(temps[1]);
    for (const temp of temps) {
      expect(path.dirname(temp)).toBe(tmpdir());
      expect(path.basename(temp)).toMatch(/^nextrec-build-/);
      expect(existsSync(temp)).toBe(false);
    }
  });

  it('ends its launcher and the builds it runs when closed', async () => {
    const launcher = new BuildLauncher(true, BUILD_NICENESS, COMPILED_LAUNCHER);
    const pidFile = path.join(folder, 'pid.txt');
    const slow = path.join(folder, 'slow.mjs');
    writeFileSync(
      slow,
      // Written under another name and renamed, so the test never reads the file half written.
      [
        "import { renameSync, writeFileSync } from 'node:fs';",
        "import { tmpdir } from 'node:os';",
        `writeFileSync(${JSON.stringify(pidFile + '.part')}, process.ppid + ' ' + tmpdir());`,
        `renameSync(${JSON.stringify(pidFile + '.part')}, ${JSON.stringify(pidFile)});`,
        'setInterval(() => undefined, 1000);',
      ].join('\n'),
    );
    const build = processBuildRunner(
      folder,
      undefined,
      pathToFileURL(slow),
      launcher,
    )('shop', ['ease'], new AbortController().signal);
    await until(() => existsSync(pidFile));
    const [launcherPid, temp] = readFileSync(pidFile, 'utf8').split(' ');
    expect(existsSync(temp)).toBe(true);
    launcher.close();
    await expect(build).rejects.toThrow('the build launcher was closed');
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(Number(launcherPid)));
    // The launcher waited for the build it ended, and removed its temporary folder.
    expect(existsSync(temp)).toBe(false);
  });

  it('fails the builds waiting on a launcher that ended, and starts another for the next build', async () => {
    const report = path.join(folder, 'parents.txt');
    const reporting = path.join(folder, 'reporting.mjs');
    writeFileSync(
      reporting,
      `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(report)}, process.ppid + '\\n');\n`,
    );
    // Ends by itself: its launcher is killed below, and nothing else would end it.
    const slow = path.join(folder, 'slow.mjs');
    writeFileSync(slow, 'setTimeout(() => undefined, 3000);\n');
    const launcher = new BuildLauncher(true, BUILD_NICENESS, COMPILED_LAUNCHER);
    const reportParent = processBuildRunner(folder, undefined, pathToFileURL(reporting), launcher);
    const waitLong = processBuildRunner(folder, undefined, pathToFileURL(slow), launcher);
    const signal = new AbortController().signal;

    await reportParent('shop', ['ease'], signal);
    const first = Number(readFileSync(report, 'utf8').trim());
    expect(first).not.toBe(process.pid);
    const stuck = waitLong('shop', ['ease'], signal);
    process.kill(first, 'SIGKILL');
    await expect(stuck).rejects.toThrow('the build launcher ended');
    await reportParent('shop', ['ease'], signal);
    const parents = readFileSync(report, 'utf8').trim().split('\n').map(Number);
    expect(parents).toHaveLength(2);
    expect(parents[1]).not.toBe(first);
    expect(parents[1]).not.toBe(process.pid);
  });
});
