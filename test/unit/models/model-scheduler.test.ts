import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendInteractions } from '../../../src/ingestion/events.js';
import { buildTenant } from '../../../jobs/build.js';
import type { ModelName } from '../../../src/artifacts/layout.js';
import {
  BUILD_NICENESS,
  DEFAULT_SCHEDULE,
  ModelScheduler,
  processBuildRunner,
} from '../../../src/models/model-scheduler.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';

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
  );
  // The scheduler of the runtime stays idle; this one is told about commits by hand.
  scheduler.start(quiet);
  return runtime.state.get('shop')!;
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
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
    const shop = await setUp({ slowModelSpacingMs: 600 }, ['cooccurrence', 'factors']);
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
    expect(shop.factors!.builtAt - firstFactors).toBeGreaterThanOrEqual(600);
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
});

describe('processBuildRunner', () => {
  it('ends the build process when its signal aborts', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'nextrec-runner-'));
    try {
      const script = path.join(folder, 'endless.mjs');
      writeFileSync(script, 'setInterval(() => undefined, 1000);\n');
      const controller = new AbortController();
      const build = processBuildRunner(folder, undefined, new URL(`file://${script}`))(
        'shop',
        ['ease'],
        controller.signal,
      );
      setTimeout(() => controller.abort(), 200);
      await expect(build).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('runs the build process at the lowest CPU priority, leaving the daemon its own', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'nextrec-runner-'));
    try {
      const script = path.join(folder, 'priority.mjs');
      const report = path.join(folder, 'priority.txt');
      // The daemon lowers the priority right after starting the process: wait a little for it.
      writeFileSync(
        script,
        [
          "import { getPriority } from 'node:os';",
          "import { writeFileSync } from 'node:fs';",
          'const deadline = Date.now() + 5000;',
          `const check = () => getPriority() === ${BUILD_NICENESS} || Date.now() > deadline`,
          `  ? writeFileSync(${JSON.stringify(report)}, String(getPriority()))`,
          '  : setTimeout(check, 20);',
          'check();',
        ].join('\n'),
      );
      const before = getPriority();
      await processBuildRunner(folder, undefined, new URL(`file://${script}`))(
        'shop',
        ['ease'],
        new AbortController().signal,
      );
      expect(Number(readFileSync(report, 'utf8'))).toBe(BUILD_NICENESS);
      expect(getPriority()).toBe(before);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
