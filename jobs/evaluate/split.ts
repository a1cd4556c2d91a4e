/** One user-item interaction of an evaluation dataset; `ts` orders a user's events (epoch ms). */
export interface DatasetEvent {
  user: string;
  item: string;
  ts: number;
}

export interface Split {
  train: DatasetEvent[];
  valid: DatasetEvent[];
  test: DatasetEvent[];
}

export type SplitKind = 'random' | 'temporal';

/** A small seeded generator (mulberry32): the same seed gives the same split on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * How many of `total` events go to train, valid and test for ratios 0.8 / 0.1 / 0.1, as RecBole counts
 * them: valid and test get floor(ratio × total), train the rest; a part that would get a fraction of one
 * event gets one while train keeps more than one.
 */
export function splitCounts(total: number, ratios: readonly number[] = [0.8, 0.1, 0.1]): number[] {
  const counts = ratios.map((ratio) => Math.floor(ratio * total));
  counts[0] = total - counts.slice(1).reduce((a, b) => a + b, 0);
  for (let i = 1; i < ratios.length; i++) {
    if (counts[0] <= 1) break;
    const share = ratios[ratios.length - i] * total;
    if (share > 0 && share < 1) {
      counts[ratios.length - i]++;
      counts[0]--;
    }
  }
  return counts;
}

/**
 * Splits each user's events 80/10/10: `random` shuffles them first (seeded; RecBole's default protocol),
 * `temporal` keeps time order, so valid and test are the user's last 20%.
 */
export function splitDataset(events: readonly DatasetEvent[], kind: SplitKind, seed: number): Split {
  const byUser = new Map<string, DatasetEvent[]>();
  for (const event of events) {
    const list = byUser.get(event.user);
    if (list) list.push(event);
    else byUser.set(event.user, [event]);
  }
  const random = seededRandom(seed);
  const split: Split = { train: [], valid: [], test: [] };
  for (const user of [...byUser.keys()].sort()) {
    const list = byUser.get(user)!;
    list.sort((a, b) => a.ts - b.ts || (a.item < b.item ? -1 : a.item > b.item ? 1 : 0));
    if (kind === 'random') {
      for (let i = list.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [list[i], list[j]] = [list[j], list[i]];
      }
    }
    const [train, valid] = splitCounts(list.length);
    split.train.push(...list.slice(0, train));
    split.valid.push(...list.slice(train, train + valid));
    split.test.push(...list.slice(train + valid));
  }
  return split;
}
