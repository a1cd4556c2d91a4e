import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/contract/errors.js';
import { SCENARIO } from '../../../src/contract/scenarios.js';
import { resolveProjection } from '../../../src/engine/projection.js';
import { rankingOutcome, type RankedAnswer, type RankingOutcome } from '../../../src/engine/ranker.js';
import { ASSIST_BACKLOG, WorkerRanker } from '../../../src/engine/worker-ranker.js';
import { ServingState, type TenantState } from '../../../src/state/tenant-state.js';
import {
  addEvents,
  item,
  neighboursOf,
  NOW,
  request,
  type RequestBody,
  upsertShoesAndBags,
} from '../../support/tenant-fixture.js';

// The thread runs the compiled module (`npm test` builds before it runs the tests).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const COMPILED_SCRIPT = pathToFileURL(path.join(ROOT, 'dist/src/engine/ranking-worker.js'));

const rankers: WorkerRanker[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(rankers.splice(0).map((ranker) => ranker.close()));
  dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true }));
});

function started(script = COMPILED_SCRIPT): WorkerRanker {
  const ranker = new WorkerRanker(script);
  rankers.push(ranker);
  return ranker;
}

/** A ranker whose thread must not fail: had it failed, this thread would rank, and alike. */
function startedSound(): WorkerRanker {
  const ranker = started();
  ranker.whenFailed((error) => expect.unreachable(`the ranking thread failed: ${error.message}`));
  return ranker;
}

/** What the stand-ins for the ranking thread answer, and the same as a JavaScript expression. */
const THREAD_ANSWER: RankedAnswer = {
  body: '{"thread":true',
  items: [],
  algorithm: 'thread',
  scenario: '',
  experiment: '',
};
const THREAD_ANSWER_JS = JSON.stringify(THREAD_ANSWER);

/** A stand-in for the ranking thread, from its module's source. */
function scriptOf(source: string): URL {
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-worker-'));
  dirs.push(dir);
  const file = path.join(dir, 'ranking-thread.mjs');
  writeFileSync(file, `import { parentPort } from 'node:worker_threads';\n${source}`);
  return pathToFileURL(file);
}

/** A shop whose every change goes to the ranker's thread. */
function shopFor(ranker: WorkerRanker): TenantState {
  const tenant = new ServingState(ranker.changes).add('shop');
  upsertShoesAndBags(tenant);
  addEvents(tenant, [
    { item: 'a', user: 'u1' },
    { item: 'b', user: 'u1', country: 'DE' },
    { item: 'c', user: 'u2', type: 'purchase' },
    { item: 'd', times: 3 },
  ]);
  tenant.replaceNeighbours(
    neighboursOf(tenant, [
      ['a', 'b', 0.5],
      ['a', 'c', 0.25],
    ]),
  );
  tenant.putConfigDocument(
    'scenarios',
    'pdp',
    SCENARIO.parse({ slug: 'pdp', logicType: 'item-to-item', filter: `'price' > 5` }),
  );
  return tenant;
}

function rankedBy(ranker: WorkerRanker, tenant: TenantState, body: RequestBody): Promise<RankingOutcome> {
  const recommendation = request(body);
  const projection = resolveProjection(recommendation.projection);
  return new Promise((resolve) => ranker.rank(tenant, recommendation, projection, NOW, resolve));
}

function rankedHere(tenant: TenantState, body: RequestBody): RankingOutcome {
  const recommendation = request(body);
  return rankingOutcome(tenant, recommendation, resolveProjection(recommendation.projection), NOW);
}

/** The item ids of a rendered list (which ends where its recommId would follow). */
function idsOf(outcome: RankingOutcome): string[] {
  const answer = JSON.parse(`${(outcome as RankedAnswer).body}}`) as { items: { itemId: string }[] };
  return answer.items.map((entry) => entry.itemId);
}

const BODIES: RequestBody[] = [
  { scenario: 'pdp', itemId: 'a' },
  { logicType: 'item-to-item', itemId: 'a', includedProperties: ['attributes.name'] },
  { logicType: 'user-to-item', userId: 'u1', country: 'DE', returnProperties: false },
  { logicType: 'recently-viewed', userId: 'u1' },
];

describe('WorkerRanker', () => {
  it('ranks in its thread what this thread ranks, with every change made before the request', async () => {
    const ranker = startedSound();
    const tenant = shopFor(ranker);
    const answers = await Promise.all(BODIES.map((body) => rankedBy(ranker, tenant, body)));
    expect(answers).toEqual(BODIES.map((body) => rankedHere(tenant, body)));
    expect(idsOf(answers[0])).toContain('b');
    // Each answer's items travel by dense id too, naming the items its text lists.
    for (const answer of answers as RankedAnswer[])
      expect(answer.items.map((id) => tenant.catalog.externalIds[id])).toEqual(idsOf(answer));

    // Written just before the request, in the same turn: the thread applies it first.
    tenant.upsertItem(
      item('b', { category: 'shoes', attributes: { name: 'B', price: 20 }, available: false }),
    );
    const afterWrite = await rankedBy(ranker, tenant, BODIES[0]);
    expect(afterWrite).toEqual(rankedHere(tenant, BODIES[0]));
    expect(idsOf(afterWrite)).not.toContain('b');
  });

  it('collects its garbage when asked, its heap smaller after and its replica whole', async () => {
    const ranker = startedSound();
    const tenant = shopFor(ranker);
    const before = await Promise.all(BODIES.map((body) => rankedBy(ranker, tenant, body)));
    // Garbage enough that its collection outweighs what the thread allocates to report its heap.
    for (let round = 0; round < 50; round++)
      await Promise.all(BODIES.map((body) => rankedBy(ranker, tenant, body)));
    const grown = (await ranker.threadHeap())!;
    ranker.collectGarbage();
    const after = (await ranker.threadHeap())!;
    expect(after.used).toBeLessThanOrEqual(grown.used);
    expect(await Promise.all(BODIES.map((body) => rankedBy(ranker, tenant, body)))).toEqual(before);
  });

  it('settles once its thread has done all it was sent: the requests before answered, the changes applied', async () => {
    const ranker = startedSound();
    const tenant = shopFor(ranker);
    const answered: RankingOutcome[] = [];
    for (const body of BODIES) {
      const recommendation = request(body);
      const projection = resolveProjection(recommendation.projection);
      ranker.rank(tenant, recommendation, projection, NOW, (outcome) => answered.push(outcome));
    }
    // A change recorded after the requests, not sent yet: settling sends it, and waits for it.
    tenant.upsertItem(item('e', { category: 'shoes', attributes: { name: 'E', price: 50 } }));
    await ranker.settled();
    expect(answered).toHaveLength(BODIES.length);
    expect((await ranker.threadHeap())!.cached!.shop.rendered).toBeGreaterThan(0);
    // What the thread ranks from has item e, as this thread's state has.
    const withE = await rankedBy(ranker, tenant, { logicType: 'user-to-item', userId: 'nobody', count: 20 });
    expect(idsOf(withE)).toContain('e');
    await ranker.close();
    // A closed ranker has nothing left to do.
    await ranker.settled();
  });

  it("answers a request's error as the ApiError it is", async () => {
    const ranker = startedSound();
    const tenant = shopFor(ranker);
    const error = await rankedBy(ranker, tenant, { logicType: 'item-to-item', itemId: 'nope' });
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'ITEM_NOT_FOUND', statusCode: 404 });
  });

  it('ranks in this thread once its thread fails, the requests in flight included', async () => {
    // Answers the first requests with a list of its own, then breaks.
    const ranker = started(
      scriptOf(`let messages = 0;
        parentPort.on('message', ({ requests }) => {
          if (requests.length === 0) return;
          if (messages++ > 0) throw new Error('ranking thread broke');
          parentPort.postMessage({ answers: requests.map(() => (${THREAD_ANSWER_JS})), failures: requests.map(() => null) });
        });`),
    );
    const failures: Error[] = [];
    ranker.whenFailed((error) => failures.push(error));
    const tenant = shopFor(ranker);
    expect(await rankedBy(ranker, tenant, BODIES[0])).toEqual(THREAD_ANSWER);
    expect(failures).toEqual([]);
    const inFlight = await Promise.all(BODIES.map((body) => rankedBy(ranker, tenant, body)));
    expect(inFlight).toEqual(BODIES.map((body) => rankedHere(tenant, body)));
    expect(failures.map((error) => error.message)).toEqual(['ranking thread broke']);
    expect(await rankedBy(ranker, tenant, BODIES[1])).toEqual(rankedHere(tenant, BODIES[1]));
    const late: Error[] = [];
    ranker.whenFailed((error) => late.push(error));
    expect(late).toEqual(failures);
  });

  it('ranks in this thread what waits for its thread when it is closed, and what comes after', async () => {
    const ranker = started(scriptOf(`parentPort.on('message', () => {});`));
    const tenant = shopFor(ranker);
    const waiting = rankedBy(ranker, tenant, BODIES[0]);
    await new Promise((resolve) => setImmediate(resolve));
    await ranker.close();
    expect(await waiting).toEqual(rankedHere(tenant, BODIES[0]));
    expect(await rankedBy(ranker, tenant, BODIES[3])).toEqual(rankedHere(tenant, BODIES[3]));
  });

  it("leaves to its thread what comes while only the thread's answers wait to be read", async () => {
    // Counts every request as ranked at once, as the ranking thread does, but holds the answers until
    // an item named 'release' is written: to this thread, that is the backlog of a busy event loop.
    const ranker = started(
      scriptOf(`import { workerData } from 'node:worker_threads';
        const ranked = new Int32Array(workerData.ranked);
        const held = [];
        parentPort.on('message', ({ changes, requests, settled }) => {
          held.push(...requests);
          Atomics.add(ranked, 0, requests.length);
          if (JSON.stringify(changes).includes('"release"')) {
            const answers = held.splice(0).map(() => (${THREAD_ANSWER_JS}));
            parentPort.postMessage({ answers, failures: answers.map(() => null) });
          }
          if (settled) parentPort.postMessage({ settled: true });
        });`),
    );
    const tenant = shopFor(ranker);
    const all: Promise<RankingOutcome>[] = [];
    // Twice the backlog, in turns as HTTP requests come, each turn's after the thread took the last.
    for (let turn = 0; turn < 4; turn++) {
      for (let i = 0; i < ASSIST_BACKLOG / 2; i++) all.push(rankedBy(ranker, tenant, BODIES[turn % 3]));
      await ranker.settled();
    }
    tenant.upsertItem(item('release', { category: 'shoes', attributes: { price: 9 } }));
    expect(await Promise.all(all)).toEqual(all.map(() => THREAD_ANSWER));
  });

  it('ranks in this thread what comes while its thread is backed up, and sends it the rest', async () => {
    // Answers nothing until an item named 'release' is written, then every request it holds.
    const ranker = started(
      scriptOf(`const held = [];
        parentPort.on('message', ({ changes, requests }) => {
          held.push(...requests);
          if (!JSON.stringify(changes).includes('"release"')) return;
          const answers = held.splice(0).map(() => (${THREAD_ANSWER_JS}));
          parentPort.postMessage({ answers, failures: answers.map(() => null) });
        });`),
    );
    const release = () => tenant.upsertItem(item('release', { category: 'shoes', attributes: { price: 9 } }));
    const tenant = shopFor(ranker);
    const body = BODIES[1];
    const backedUp = Array.from({ length: ASSIST_BACKLOG }, () => rankedBy(ranker, tenant, body));
    const assisted = await Promise.all([rankedBy(ranker, tenant, body), rankedBy(ranker, tenant, BODIES[2])]);
    expect(assisted).toEqual([rankedHere(tenant, body), rankedHere(tenant, BODIES[2])]);
    release();
    expect(await Promise.all(backedUp)).toEqual(backedUp.map(() => THREAD_ANSWER));
    // Answered, the thread is sent requests again.
    const next = rankedBy(ranker, tenant, body);
    release();
    expect(await next).toEqual(THREAD_ANSWER);
  });
});
