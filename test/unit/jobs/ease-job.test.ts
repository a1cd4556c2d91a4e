import { afterEach, describe, expect, it } from 'vitest';
import { easeJob, type EaseParameters } from '../../../jobs/item-models/ease-job.js';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { NEIGHBOUR_LISTS } from '../../../src/artifacts/formats.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

/** Users' items: a is used by 4 users, b by 3, c by 3, d by 1 (so maxItems 3 leaves d out). */
const HISTORIES: Record<string, string[]> = {
  u1: ['a', 'b', 'c'],
  u2: ['a', 'b'],
  u3: ['a', 'b'],
  u4: ['a', 'c'],
  u5: ['c', 'd'],
};

let lake: LakeDb | undefined;
afterEach(() => lake?.close());

async function build(parameters: Partial<EaseParameters>) {
  lake = await LakeDb.scratch();
  await lake.appendViews(
    Object.entries(HISTORIES).flatMap(([user, items]) =>
      items.map((item) => ({ user, item, ts: NOW - 1000 })),
    ),
  );
  // The closed form whole unless a test asks for the share of largest weights.
  const built = await easeJob.build(
    lake,
    { ...easeJob.defaults, keepShare: 1, ...parameters },
    { now: NOW, threads: 1 },
  );
  return NEIGHBOUR_LISTS.decode({
    manifest: { shape: built.shape } as never,
    file: (name) => built.files[name],
  });
}

/** B = I − P·diag(1/diag(P)), P = (XᵀX + λI)⁻¹, by Gauss-Jordan elimination on a small dense matrix. */
function referenceWeights(items: string[], lambda: number): number[][] {
  const n = items.length;
  const g = items.map((a) =>
    items.map((b) => Object.values(HISTORIES).filter((h) => h.includes(a) && h.includes(b)).length),
  );
  const m = g.map((row, i) => [
    ...row.map((v, j) => v + (i === j ? lambda : 0)),
    ...items.map((_, j) => (i === j ? 1 : 0)),
  ]);
  for (let c = 0; c < n; c++) {
    const pivot = m[c][c];
    for (let k = 0; k < 2 * n; k++) m[c][k] /= pivot;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const factor = m[r][c];
      for (let k = 0; k < 2 * n; k++) m[r][k] -= factor * m[c][k];
    }
  }
  const p = m.map((row) => row.slice(n));
  return p.map((row, i) => row.map((value, j) => (i === j ? 0 : -value / p[j][j])));
}

describe('EASE job', () => {
  it('covers the most used items and keeps the weights of either sign, as the closed form gives them', async () => {
    const lists = await build({ lambda: 1, maxItems: 3, neighbours: 2, prune: 'source' });
    expect(lists.items).toEqual(['a', 'b', 'c']);
    const b = referenceWeights(['a', 'b', 'c'], 1);
    expect(b.flat().some((w) => w < 0)).toBe(true);
    lists.items.forEach((item, i) => {
      const expected = [0, 1, 2].filter((j) => j !== i).sort((x, y) => Math.abs(b[i][y]) - Math.abs(b[i][x]));
      const got = Array.from(lists.neighbours.subarray(lists.offsets[i], lists.offsets[i + 1]));
      expect(got, `neighbours of ${item}`).toEqual(expected);
      got.forEach((j, k) => expect(lists.weights[lists.offsets[i] + k]).toBeCloseTo(b[i][j], 5));
    });
  });

  it('serves only the share of weights of largest magnitude over the whole model, each list still best first', async () => {
    const whole = await build({ lambda: 1, maxItems: 3, neighbours: 2, prune: 'source' });
    const pruned = await build({ lambda: 1, maxItems: 3, neighbours: 2, prune: 'source', keepShare: 0.5 });
    const entries = (lists: typeof whole) =>
      lists.items.flatMap((_, i) =>
        Array.from(lists.neighbours.subarray(lists.offsets[i], lists.offsets[i + 1]), (j, k) => ({
          i,
          j,
          w: lists.weights[lists.offsets[i] + k],
        })),
      );
    const all = entries(whole);
    const kept = entries(pruned);
    expect(all).toHaveLength(6);
    expect(kept).toHaveLength(3);
    const threshold = Math.min(...kept.map((e) => Math.abs(e.w)));
    // Every entry left out weighs less than every one kept, and each kept one is the whole model's.
    for (const e of all)
      if (!kept.some((k) => k.i === e.i && k.j === e.j)) expect(Math.abs(e.w)).toBeLessThan(threshold);
    for (const e of kept) expect(all).toContainEqual(e);
    expect(easeJob.defaults.keepShare).toBeGreaterThan(0);
    expect(easeJob.defaults.keepShare).toBeLessThanOrEqual(1);
  });

  it('pruned by target, lists under each source the targets that keep it among their strongest', async () => {
    const lists = await build({ lambda: 1, maxItems: 3, neighbours: 1, prune: 'target' });
    const b = referenceWeights(['a', 'b', 'c'], 1);
    // For each target j, the source i ≠ j with the largest |B[i][j]|.
    const kept = [0, 1, 2].map((j) =>
      [0, 1, 2]
        .filter((i) => i !== j)
        .reduce((best, i) => (Math.abs(b[i][j]) > Math.abs(b[best][j]) ? i : best)),
    );
    for (let source = 0; source < 3; source++) {
      const targets = [0, 1, 2].filter((j) => kept[j] === source);
      const got = Array.from(lists.neighbours.subarray(lists.offsets[source], lists.offsets[source + 1]));
      expect(got.sort()).toEqual(targets);
      for (let k = lists.offsets[source]; k < lists.offsets[source + 1]; k++)
        expect(lists.weights[k]).toBeCloseTo(b[source][lists.neighbours[k]], 5);
    }
  });
});
