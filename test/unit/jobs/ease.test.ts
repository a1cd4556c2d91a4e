import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildEase, invertSpd, type ItemGram, type NeighbourLists } from '../../../jobs/item-models/ease.js';

// Worker threads run the compiled module (`npm test` builds before it runs the tests).
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const COMPILED_WORKER = pathToFileURL(path.join(ROOT, 'dist/jobs/item-models/ease-worker.js'));

const dirs: string[] = [];
afterAll(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function uniformFrom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 4294967296;
  };
}

/** XᵀX + shift·I for a random rows × n X, n×n row-major. */
function randomSpd(n: number, rows: number, seed: number, shift = 0): Float64Array {
  const uniform = uniformFrom(seed);
  const x = Float64Array.from({ length: rows * n }, () => uniform() - 0.5);
  const a = new Float64Array(n * n);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) a[i * n + j] += x[r * n + i] * x[r * n + j];
    }
  }
  for (let i = 0; i < n; i++) a[i * n + i] += shift;
  return a;
}

function multiply(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const c = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < n; p++) {
      for (let j = 0; j < n; j++) c[i * n + j] += a[i * n + p] * b[p * n + j];
    }
  }
  return c;
}

function maxDistanceFromIdentity(m: Float64Array, n: number): number {
  let distance = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) distance = Math.max(distance, Math.abs(m[i * n + j] - (i === j ? 1 : 0)));
  }
  return distance;
}

/** Gauss-Jordan with partial pivoting on [A | I]: a reference inverse independent of the code under test. */
function naiveInverse(a: Float64Array, n: number): Float64Array {
  const rows = Array.from({ length: n }, (_, i) => [
    ...Array.from(a.subarray(i * n, (i + 1) * n)),
    ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)),
  ]);
  for (let col = 0; col < n; col++) {
    let best = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(rows[r][col]) > Math.abs(rows[best][col])) best = r;
    [rows[col], rows[best]] = [rows[best], rows[col]];
    const pivot = rows[col][col];
    rows[col] = rows[col].map((value) => value / pivot);
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = rows[r][col];
      rows[r] = rows[r].map((value, j) => value - factor * rows[col][j]);
    }
  }
  return Float64Array.from(rows.flatMap((row) => row.slice(n)));
}

/**
 * The item Gram matrix of users' item sets. `order` says how the off-diagonal pairs are listed: both
 * (a, b) and (b, a), as a self-join gives them, or each unordered pair once with a < b or with a > b.
 */
function gramOf(items: number, users: number[][], order: 'both' | 'ascending' | 'descending'): ItemGram {
  const diagonal = new Float64Array(items);
  const counts = new Map<number, number>();
  for (const user of users) {
    for (const a of user) {
      diagonal[a]++;
      for (const b of user) {
        const keep = order === 'both' ? a !== b : order === 'ascending' ? a < b : a > b;
        if (keep) counts.set(a * items + b, (counts.get(a * items + b) ?? 0) + 1);
      }
    }
  }
  const keys = [...counts.keys()];
  return {
    items,
    diagonal,
    pairA: Int32Array.from(keys, (key) => Math.floor(key / items)),
    pairB: Int32Array.from(keys, (key) => key % items),
    pairCount: Float32Array.from(keys, (key) => counts.get(key)!),
  };
}

/** G + λI from a gram, dense, built apart from the code under test. */
function denseGram(gram: ItemGram, lambda: number): Float64Array {
  const n = gram.items;
  const g = new Float64Array(n * n);
  for (let i = 0; i < n; i++) g[i * n + i] = gram.diagonal[i] + lambda;
  for (let e = 0; e < gram.pairA.length; e++) {
    g[gram.pairA[e] * n + gram.pairB[e]] = gram.pairCount[e];
    g[gram.pairB[e] * n + gram.pairA[e]] = gram.pairCount[e];
  }
  return g;
}

/** Each item's list as [neighbour, weight] pairs. */
function listsOf(lists: NeighbourLists): [number, number][][] {
  return Array.from({ length: lists.offsets.length - 1 }, (_, i) =>
    Array.from({ length: lists.offsets[i + 1] - lists.offsets[i] }, (_, e) => {
      const at = lists.offsets[i] + e;
      return [lists.neighbours[at], lists.weights[at]] as [number, number];
    }),
  );
}

/** The expected lists from B = I − P diag(1/diag(P)), P from the reference inverse. */
function referenceLists(gram: ItemGram, lambda: number, neighbours: number): [number, number][][] {
  const n = gram.items;
  const p = naiveInverse(denseGram(gram, lambda), n);
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => [j, -p[i * n + j] / p[j * n + j]] as [number, number])
      .filter(([j, weight]) => j !== i && weight > 0)
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, neighbours),
  );
}

function expectListsClose(actual: [number, number][][], expected: [number, number][][]): void {
  expect(actual.map((list) => list.map(([j]) => j))).toEqual(expected.map((list) => list.map(([j]) => j)));
  actual.forEach((list, i) =>
    list.forEach(([, weight], e) => expect(weight).toBeCloseTo(expected[i][e][1], 6)),
  );
}

/** Random users, each with 2 to 7 distinct items, the low indexes more popular. */
function randomUsers(items: number, users: number, seed: number): number[][] {
  const uniform = uniformFrom(seed);
  return Array.from({ length: users }, () => {
    const set = new Set<number>();
    const size = 2 + Math.floor(uniform() * 6);
    while (set.size < size) set.add(Math.floor(items * uniform() ** 1.5));
    return [...set];
  });
}

describe('invertSpd', () => {
  it('inverts a 3×3 SPD matrix exactly, reading only its upper triangle', () => {
    // det = 12; the inverse is the adjugate over 12.
    const matrix = Float64Array.from([4, 2, 0, NaN, 3, 1, NaN, NaN, 2]);
    expect(invertSpd(matrix, 3)).toBe(true);
    const expected = [5, -4, 2, -4, 8, -4, 2, -4, 8].map((value) => value / 12);
    matrix.forEach((value, i) => expect(Math.abs(value - expected[i])).toBeLessThan(1e-9));
  });

  it.each([
    { n: 50, blocks: 'one pivot block' },
    { n: 150, blocks: 'three pivot blocks, the last not a multiple of four wide' },
  ])('gives a symmetric A⁻¹ with A·A⁻¹ = I for a random SPD matrix of order $n ($blocks)', ({ n }) => {
    const a = randomSpd(n, n + 30, n, 0.01);
    const inverse = a.slice();
    // Garbage in the lower triangle: never read.
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) inverse[i * n + j] = NaN;
    expect(invertSpd(inverse, n)).toBe(true);
    expect(maxDistanceFromIdentity(multiply(a, inverse, n), n)).toBeLessThan(1e-9);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < i; j++) expect(inverse[i * n + j]).toBe(inverse[j * n + i]);
  });

  it('matches a reference inverse of an ill-conditioned matrix', () => {
    const n = 90;
    const a = randomSpd(n, n, 3, 1e-3);
    const inverse = a.slice();
    expect(invertSpd(inverse, n)).toBe(true);
    const reference = naiveInverse(a, n);
    const scale = Math.max(...reference.map(Math.abs));
    reference.forEach((value, i) => expect(Math.abs(inverse[i] - value) / scale).toBeLessThan(1e-8));
  });

  it('returns false for matrices that are not positive definite', () => {
    // Indefinite: eigenvalues 3 and −1.
    expect(invertSpd(Float64Array.from([1, 2, 2, 1]), 2)).toBe(false);
    // Singular positive semidefinite: row 1 is half row 0.
    expect(invertSpd(Float64Array.from([4, 2, 2, 2, 1, 1, 2, 1, 5]), 3)).toBe(false);
    expect(invertSpd(Float64Array.from([1, 0, 0, NaN]), 2)).toBe(false);
    // Indefinite only in the third pivot block.
    const n = 150;
    const late = randomSpd(n, n + 30, 7, 0.01);
    late[140 * n + 140] = -1;
    expect(invertSpd(late, n)).toBe(false);
  });

  it('handles the empty and 1×1 matrices, and rejects a wrong length', () => {
    expect(invertSpd(new Float64Array(0), 0)).toBe(true);
    const one = Float64Array.from([4]);
    expect(invertSpd(one, 1)).toBe(true);
    expect(one[0]).toBe(0.25);
    expect(() => invertSpd(new Float64Array(5), 2)).toThrow(RangeError);
  });
});

describe('buildEase', () => {
  // Users {0, 1}, {0, 1}, {1, 2}, {0}: G + I = [[4, 2, 0], [2, 4, 1], [0, 1, 2]], whose inverse is
  // [[7, −4, 2], [−4, 8, −4], [2, −4, 12]] / 20, so B[i][j] = −P[i][j] / P[j][j]:
  //   B[0] = [0, 1/2, −1/6], B[1] = [4/7, 0, 1/3], B[2] = [−2/7, 1/2, 0].
  const tinyUsers = [[0, 1], [0, 1], [1, 2], [0]];

  it('gives the hand-computed weights, positive only, best first, never the item itself', async () => {
    const lists = await buildEase(gramOf(3, tinyUsers, 'both'), { lambda: 1, neighbours: 5, threads: 1 });
    expect(Array.from(lists.offsets)).toEqual([0, 1, 3, 4]);
    expect(Array.from(lists.neighbours)).toEqual([1, 0, 2, 1]);
    expect(Array.from(lists.weights)).toEqual([1 / 2, 4 / 7, 1 / 3, 1 / 2].map(Math.fround));
  });

  it('keeps at most `neighbours` per item, the best', async () => {
    const lists = await buildEase(gramOf(3, tinyUsers, 'both'), { lambda: 1, neighbours: 1, threads: 1 });
    expect(listsOf(lists)).toEqual([
      [[1, Math.fround(1 / 2)]],
      [[0, Math.fround(4 / 7)]],
      [[1, Math.fround(1 / 2)]],
    ]);
  });

  it('matches weights computed from a reference inverse', async () => {
    const gram = gramOf(40, randomUsers(40, 300, 11), 'both');
    const lists = await buildEase(gram, { lambda: 5, neighbours: 8, threads: 1 });
    expectListsClose(listsOf(lists), referenceLists(gram, 5, 8));
    for (const list of listsOf(lists)) {
      expect(list.length).toBeLessThanOrEqual(8);
      for (let e = 1; e < list.length; e++) expect(list[e][1]).toBeLessThanOrEqual(list[e - 1][1]);
    }
  });

  it('takes each pair in either order or in both, and refuses conflicting or diagonal pairs', async () => {
    const users = randomUsers(30, 200, 5);
    const options = { lambda: 3, neighbours: 6, threads: 1 };
    const both = await buildEase(gramOf(30, users, 'both'), options);
    expect(await buildEase(gramOf(30, users, 'ascending'), options)).toEqual(both);
    expect(await buildEase(gramOf(30, users, 'descending'), options)).toEqual(both);

    const tiny = gramOf(3, tinyUsers, 'both');
    const conflicting = {
      ...tiny,
      pairCount: tiny.pairCount.map((count, e) => (e === 0 ? count + 1 : count)),
    };
    await expect(buildEase(conflicting, options)).rejects.toThrow(/counts/);
    const diagonal = { ...tiny, pairB: tiny.pairA.slice() };
    await expect(buildEase(diagonal, options)).rejects.toThrow(/diagonal/);
    const outside = { ...tiny, pairB: tiny.pairB.map(() => 3) };
    await expect(buildEase(outside, options)).rejects.toThrow(/no item/);
  });

  it('rejects a Gram matrix that is not positive definite', async () => {
    // Item 2 has no users: with λ = 0 its row of G is zero.
    await expect(
      buildEase(gramOf(3, [[0, 1], [1]], 'both'), { lambda: 0, neighbours: 2, threads: 1 }),
    ).rejects.toThrow(/positive definite/);
  });

  it('lists an item’s own group first when items come in two co-consumed groups', async () => {
    // Items 0-19 and 20-39; each user takes 3 to 6 items from one group and, one time in ten, a stray item
    // of the other.
    const uniform = uniformFrom(21);
    const users = Array.from({ length: 600 }, () => {
      const group = uniform() < 0.5 ? 0 : 20;
      const set = new Set<number>();
      const size = 3 + Math.floor(uniform() * 4);
      while (set.size < size) set.add(group + Math.floor(uniform() * 20));
      if (uniform() < 0.1) set.add(20 - group + Math.floor(uniform() * 20));
      return [...set];
    });
    const lists = listsOf(
      await buildEase(gramOf(40, users, 'both'), {
        lambda: 10,
        neighbours: 5,
        threads: 2,
        workerScript: COMPILED_WORKER,
      }),
    );
    lists.forEach((list, item) => {
      expect(list.length).toBe(5);
      for (const [neighbour] of list) expect(neighbour < 20).toBe(item < 20);
    });
  });

  it('gives the same bits with one thread and with two', async () => {
    // Several pivot blocks, and rows shared unevenly between the threads.
    const gram = gramOf(150, randomUsers(150, 1500, 8), 'both');
    const one = await buildEase(gram, { lambda: 2, neighbours: 10, threads: 1 });
    const two = await buildEase(gram, {
      lambda: 2,
      neighbours: 10,
      threads: 2,
      workerScript: COMPILED_WORKER,
    });
    expect(two).toEqual(one);
    expectListsClose(listsOf(two), referenceLists(gram, 2, 10));
  });

  it('rejects, and ends its threads, when a thread fails', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-ease-'));
    dirs.push(dir);
    const script = path.join(dir, 'failing-thread.mjs');
    writeFileSync(
      script,
      `import { parentPort } from 'node:worker_threads';\n` +
        `parentPort.on('message', () => { throw new Error('thread failed'); });\n`,
    );
    const gram = gramOf(20, randomUsers(20, 50, 2), 'both');
    await expect(
      buildEase(gram, { lambda: 1, neighbours: 3, threads: 2, workerScript: pathToFileURL(script) }),
    ).rejects.toThrow('thread failed');
  });
});
