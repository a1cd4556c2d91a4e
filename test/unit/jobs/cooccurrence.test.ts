import { afterEach, describe, expect, it } from 'vitest';
import { cooccurrenceJob, type CooccurrenceParameters } from '../../../jobs/item-models/cooccurrence.js';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { NEIGHBOUR_LISTS, type NeighbourLists } from '../../../src/artifacts/formats.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const DAY = 86_400_000;

/**
 * Users and their items: a is seen by u1..u4, b by u1..u3, c by u1, u4, u5, d by u5 only.
 * Pairs sharing users: a-b 3 (u1 u2 u3), a-c 2 (u1 u4), b-c 1 (u1), c-d 1 (u5).
 */
const HISTORIES: Record<string, string[]> = {
  u1: ['a', 'b', 'c'],
  u2: ['a', 'b'],
  u3: ['a', 'b'],
  u4: ['a', 'c'],
  u5: ['c', 'd'],
};
const USERS_OF = { a: 4, b: 3, c: 3, d: 1 };

let lake: LakeDb | undefined;
afterEach(() => {
  lake?.close();
  lake = undefined;
});

async function build(parameters: Partial<CooccurrenceParameters>): Promise<Map<string, [string, number][]>> {
  // A test may build twice: the first lake is closed, its spill folder with it.
  lake?.close();
  lake = await LakeDb.scratch();
  await lake.appendViews(
    Object.entries(HISTORIES).flatMap(([user, items]) =>
      items.map((item) => ({ user, item, ts: NOW - DAY })),
    ),
  );
  const built = await cooccurrenceJob.build(
    lake,
    { ...cooccurrenceJob.defaults, ...parameters },
    { now: NOW, threads: 1 },
  );
  const lists: NeighbourLists = NEIGHBOUR_LISTS.decode({
    manifest: { shape: built.shape } as never,
    file: (name) => built.files[name],
  });
  const result = new Map<string, [string, number][]>();
  lists.items.forEach((item, i) => {
    const entries: [string, number][] = [];
    for (let k = lists.offsets[i]; k < lists.offsets[i + 1]; k++)
      entries.push([lists.items[lists.neighbours[k]], lists.weights[k]]);
    result.set(item, entries);
  });
  return result;
}

function expectLists(actual: Map<string, [string, number][]>, expected: Record<string, [string, number][]>) {
  expect([...actual.keys()].sort()).toEqual(Object.keys(expected).sort());
  for (const [item, entries] of Object.entries(expected)) {
    const got = actual.get(item)!;
    expect(
      got.map(([neighbour]) => neighbour),
      `neighbours of ${item}`,
    ).toEqual(entries.map(([n]) => n));
    got.forEach(([, weight], k) => expect(weight).toBeCloseTo(entries[k][1], 5));
  }
}

describe('co-occurrence job', () => {
  it('cosine with shrinkage: shared users over the product of the audiences’ norms plus the shrink term', async () => {
    const shrink = 2;
    // Binary histories: every strength is ln 2, which the cosine cancels but for the shrink term.
    const v = Math.log(2) ** 2;
    const cos = (shared: number, x: number, y: number) => (shared * v) / (Math.sqrt(x * v * y * v) + shrink);
    const { a, b, c, d } = USERS_OF;
    expectLists(await build({ similarity: 'cosine', shrink, prune: 'source' }), {
      a: [
        ['b', cos(3, a, b)],
        ['c', cos(2, a, c)],
      ],
      b: [
        ['a', cos(3, a, b)],
        ['c', cos(1, b, c)],
      ],
      c: [
        ['a', cos(2, a, c)],
        ['d', cos(1, c, d)],
        ['b', cos(1, b, c)],
      ],
      d: [['c', cos(1, c, d)]],
    });
  });

  it('Jaccard: shared users over the union of the audiences', async () => {
    expectLists(await build({ similarity: 'jaccard', prune: 'source' }), {
      a: [
        ['b', 3 / 4],
        ['c', 2 / 5],
      ],
      b: [
        ['a', 3 / 4],
        ['c', 1 / 5],
      ],
      c: [
        ['a', 2 / 5],
        ['d', 1 / 3],
        ['b', 1 / 5],
      ],
      d: [['c', 1 / 3]],
    });
  });

  it('RP3beta: a walk item → user → item, each step split evenly, ending items penalised by popularity', async () => {
    const alpha = 1;
    const beta = 0.5;
    // Users' item counts: u1 3, u2 2, u3 2, u4 2, u5 2.
    const walk = (from: string, to: string, users: number[]) =>
      users.reduce((sum, d) => sum + Math.pow(1 / (USERS_OF[from as keyof typeof USERS_OF] * d), alpha), 0) /
      Math.pow(USERS_OF[to as keyof typeof USERS_OF], beta);
    const lists = await build({ similarity: 'rp3beta', alpha, beta, prune: 'source' });
    expectLists(lists, {
      a: [
        ['b', walk('a', 'b', [3, 2, 2])],
        ['c', walk('a', 'c', [3, 2])],
      ],
      b: [
        ['a', walk('b', 'a', [3, 2, 2])],
        ['c', walk('b', 'c', [3])],
      ],
      c: [
        ['d', walk('c', 'd', [2])],
        ['a', walk('c', 'a', [3, 2])],
        ['b', walk('c', 'b', [3])],
      ],
      d: [['c', walk('d', 'c', [2])]],
    });
  });

  it('keeps the best neighbours per target item, or per source item', async () => {
    // One neighbour each. By source: every item keeps its best. By target: item x lists the items whose
    // best neighbour x is, so a, which is b's and c's best, lists both, and b lists none.
    const bySource = await build({ similarity: 'jaccard', neighbours: 1, prune: 'source' });
    expect(Object.fromEntries([...bySource].map(([item, list]) => [item, list.map(([n]) => n)]))).toEqual({
      a: ['b'],
      b: ['a'],
      c: ['a'],
      d: ['c'],
    });
    const byTarget = await build({ similarity: 'jaccard', neighbours: 1, prune: 'target' });
    expect(Object.fromEntries([...byTarget].map(([item, list]) => [item, list.map(([n]) => n)]))).toEqual({
      a: ['b', 'c'],
      b: ['a'],
      c: ['d'],
      d: [],
    });
  });

  it('counts only events inside the window, and only each user’s most recent items', async () => {
    lake = await LakeDb.scratch();
    await lake.appendViews([
      { user: 'u1', item: 'a', ts: NOW - 100 * DAY },
      { user: 'u1', item: 'b', ts: NOW - DAY },
      { user: 'u1', item: 'c', ts: NOW - DAY },
      { user: 'u2', item: 'a', ts: NOW - 3 * DAY },
      { user: 'u2', item: 'b', ts: NOW - 2 * DAY },
      { user: 'u2', item: 'c', ts: NOW - DAY },
    ]);
    const built = await cooccurrenceJob.build(
      lake,
      { ...cooccurrenceJob.defaults, windowDays: 90, itemsPerUser: 2, prune: 'source' },
      { now: NOW, threads: 1 },
    );
    const lists = NEIGHBOUR_LISTS.decode({
      manifest: { shape: built.shape } as never,
      file: (n) => built.files[n],
    });
    // u1's a is too old, u2's a is past its two most recent items: a is in no pair.
    expect(lists.items).toEqual(['b', 'c']);
    expect(built.source).toEqual({ interactions: 6, users: 2, items: 2 });
  });
});
