import type { DatasetEvent } from './split.js';

/**
 * Reference rankings computed here, independently of nextrec's jobs and pipeline, so an evaluation
 * always shows what the strong simple baselines reach on the same split.
 */
export interface Baseline {
  readonly name: string;
  /** The best items for a user, best first; `known` items are never listed. */
  rank(user: string, known: ReadonlySet<string>, k: number): string[];
}

function indexItems(train: readonly DatasetEvent[]): { ids: string[]; index: Map<string, number> } {
  const index = new Map<string, number>();
  const ids: string[] = [];
  for (const event of train) {
    if (!index.has(event.item)) {
      index.set(event.item, ids.length);
      ids.push(event.item);
    }
  }
  return { ids, index };
}

/** Most popular items of the train part (by number of users). */
export function popularity(train: readonly DatasetEvent[]): Baseline {
  const counts = new Map<string, number>();
  for (const event of train) counts.set(event.item, (counts.get(event.item) ?? 0) + 1);
  const ranked = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([id]) => id);
  return {
    name: 'baseline: most popular',
    rank(_user, known, k) {
      const list: string[] = [];
      for (const item of ranked) {
        if (list.length === k) break;
        if (!known.has(item)) list.push(item);
      }
      return list;
    },
  };
}

/**
 * Plain item-kNN: cosine similarity of items' user sets, the `neighbours` most similar kept per item, and
 * a user's score for an item the sum of its similarities to every item of the user's history.
 */
export function itemKnn(train: readonly DatasetEvent[], neighbours = 100): Baseline {
  const { ids, index } = indexItems(train);
  const usersOf: number[][] = ids.map(() => []);
  const itemsOf = new Map<string, number[]>();
  const userIndex = new Map<string, number>();
  for (const event of train) {
    let u = userIndex.get(event.user);
    if (u === undefined) userIndex.set(event.user, (u = userIndex.size));
    usersOf[index.get(event.item)!].push(u);
    const list = itemsOf.get(event.user);
    if (list) list.push(index.get(event.item)!);
    else itemsOf.set(event.user, [index.get(event.item)!]);
  }
  const byUser: number[][] = [];
  for (const [user, items] of itemsOf) byUser[userIndex.get(user)!] = items;
  const together = new Float64Array(ids.length);
  const touched: number[] = [];
  const lists: { ids: Int32Array; sims: Float64Array }[] = [];
  for (let a = 0; a < ids.length; a++) {
    for (const u of usersOf[a]) {
      for (const b of byUser[u]) {
        if (b === a) continue;
        if (together[b] === 0) touched.push(b);
        together[b]++;
      }
    }
    const scored = touched.map((b) => ({
      b,
      s: together[b] / Math.sqrt(usersOf[a].length * usersOf[b].length),
    }));
    scored.sort((x, y) => y.s - x.s || x.b - y.b);
    const kept = scored.slice(0, neighbours);
    lists.push({ ids: Int32Array.from(kept, (x) => x.b), sims: Float64Array.from(kept, (x) => x.s) });
    for (const b of touched) together[b] = 0;
    touched.length = 0;
  }
  // RecBole's ItemKNN prunes per target item: an item is scored from the `neighbours` items most similar to
  // it, so the lists are turned around (source → the targets that keep it).
  const sources: { ids: number[]; sims: number[] }[] = ids.map(() => ({ ids: [], sims: [] }));
  lists.forEach((list, target) => {
    for (let n = 0; n < list.ids.length; n++) {
      sources[list.ids[n]].ids.push(target);
      sources[list.ids[n]].sims.push(list.sims[n]);
    }
  });
  const scores = new Float64Array(ids.length);
  return {
    name: `baseline: item-kNN (cosine, ${neighbours} neighbours)`,
    rank(user, known, k) {
      const history = itemsOf.get(user) ?? [];
      const candidates: number[] = [];
      for (const a of history) {
        const { ids: near, sims } = sources[a];
        for (let n = 0; n < near.length; n++) {
          if (scores[near[n]] === 0) candidates.push(near[n]);
          scores[near[n]] += sims[n];
        }
      }
      const ranked = candidates
        .filter((b) => !known.has(ids[b]))
        .sort((x, y) => scores[y] - scores[x] || x - y)
        .slice(0, k)
        .map((b) => ids[b]);
      for (const b of candidates) scores[b] = 0;
      return ranked;
    },
  };
}
