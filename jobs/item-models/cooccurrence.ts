import { MODEL_FORMATS } from '../../src/artifacts/formats.js';
import type { ModelJob } from '../model-job.js';
import { transposeLists, type CsrLists } from './csr.js';
import { BestOf, grown, PairSums, readUserItemLists, type UserItemLists } from './item-pairs.js';
import { modelItems, selectUserItems, type EventSelection } from './user-items.js';

export const SIMILARITIES = ['cosine', 'jaccard', 'rp3beta'] as const;
export type Similarity = (typeof SIMILARITIES)[number];

export interface CooccurrenceParameters extends EventSelection {
  similarity: Similarity;
  /** Cosine: added to the denominator, so pairs of rarely seen items need more shared users to score high. */
  shrink: number;
  /** RP3beta: the random walk's transition probabilities are raised to alpha... */
  alpha: number;
  /** ...and each neighbour's score divided by its popularity to the power beta. */
  beta: number;
  /** Neighbours kept per item, best first. */
  neighbours: number;
  /**
   * `target`: a pair is kept when a is among the `neighbours` items most similar to b, so every item is
   * scored from its own closest items (as item-kNN scores; a popular a may list more than `neighbours`);
   * `source`: when b is among a's closest.
   */
  prune: 'target' | 'source';
}

/**
 * The similarity of items a and b over their users (v: a user's strength for an item, n: an item's
 * number of users, d: a user's number of items), from s, the sum over their shared users that
 * `PairSums` gives with each similarity's values and user factors:
 * - cosine: s = Σ v_a v_b; s / (sqrt(Σ v_a² Σ v_b²) + shrink)
 * - jaccard: s = |U_a ∩ U_b|; s / |U_a ∪ U_b|
 * - rp3beta: s = Σ_{u ∈ U_a ∩ U_b} d_u^-alpha; s · n_a^-alpha · n_b^-beta, a three-step random walk
 *   item → user → item (each step split evenly) with a popularity penalty on where it ends.
 */
function similarity(
  parameters: CooccurrenceParameters,
  lists: UserItemLists,
): { userFactor?: Float64Array; weight: (a: number, b: number, s: number) => number } {
  const { items, itemOffsets, itemValues } = lists;
  const n = new Float64Array(items);
  for (let i = 0; i < items; i++) n[i] = itemOffsets[i + 1] - itemOffsets[i];
  switch (parameters.similarity) {
    case 'cosine': {
      const norms = new Float64Array(items);
      for (let i = 0; i < items; i++) {
        for (let k = itemOffsets[i]; k < itemOffsets[i + 1]; k++) norms[i] += itemValues[k] * itemValues[k];
      }
      const { shrink } = parameters;
      return { weight: (a, b, s) => s / (Math.sqrt(norms[a] * norms[b]) + shrink) };
    }
    case 'jaccard':
      return { weight: (a, b, s) => s / (n[a] + n[b] - s) };
    case 'rp3beta': {
      const { alpha, beta } = parameters;
      const userFactor = new Float64Array(lists.users);
      for (let u = 0; u < lists.users; u++) {
        userFactor[u] = Math.pow(lists.userOffsets[u + 1] - lists.userOffsets[u], -alpha);
      }
      return {
        userFactor,
        weight: (a, b, s) => s * Math.pow(n[a], -alpha) * Math.pow(n[b], -beta),
      };
    }
  }
}

/**
 * Each item's `neighbours` best pairs by the similarity (weights in single precision, ties to the lower
 * item), as lists by the item they are kept for: the target b under `target` pruning, the source a under
 * `source`.
 */
function bestPairs(
  lists: UserItemLists,
  parameters: CooccurrenceParameters,
  { userFactor, weight }: ReturnType<typeof similarity>,
): CsrLists {
  const pairs = new PairSums(lists, userFactor);
  const best = new BestOf(parameters.neighbours);
  const offsets = new Int32Array(lists.items + 1);
  let neighbours = new Int32Array(1024);
  let weights = new Float32Array(1024);
  for (let x = 0; x < lists.items; x++) {
    const count = pairs.of(x);
    best.clear();
    for (let t = 0; t < count; t++) {
      const y = pairs.touched[t];
      const s = pairs.sums[y];
      const w = Math.fround(parameters.prune === 'target' ? weight(y, x, s) : weight(x, y, s));
      if (w > 0) best.offer(y, w);
    }
    const at = offsets[x];
    if (at + parameters.neighbours > neighbours.length) {
      const size = Math.max(neighbours.length * 2, at + parameters.neighbours);
      [neighbours, weights] = [grown(neighbours, size, at), grown(weights, size, at)];
    }
    offsets[x + 1] = at + best.drainInto(neighbours, weights, at);
  }
  const length = offsets[lists.items];
  return { offsets, neighbours: neighbours.slice(0, length), weights: weights.slice(0, length) };
}

export const cooccurrenceJob: ModelJob<CooccurrenceParameters> = {
  model: 'cooccurrence',
  defaults: {
    similarity: 'cosine',
    shrink: 10,
    alpha: 0.5,
    beta: 0.3,
    neighbours: 100,
    prune: 'target',
    windowDays: 90,
    halfLifeDays: 0,
    itemsPerUser: 500,
  },
  async build(lake, parameters, context) {
    await selectUserItems(lake, parameters, context.now);
    const items = await modelItems(lake);
    // Cosine sums the strengths' products; Jaccard and RP3beta count shared users (each weighted by RP3beta).
    const value = parameters.similarity === 'cosine' ? 'v' : '1.0';
    const lists = await readUserItemLists(
      lake,
      `SELECT (dense_rank() OVER (ORDER BY who) - 1)::INTEGER, idx, ${value}::DOUBLE FROM user_items`,
      items.length,
    );
    const pairs = bestPairs(lists, parameters, similarity(parameters, lists));
    const bySource = parameters.prune === 'target' ? transposeLists(pairs) : pairs;
    const encoded = MODEL_FORMATS.cooccurrence.encode({ items, ...bySource });
    return {
      ...encoded,
      parameters: { ...parameters },
      source: {
        interactions: await lake.count('SELECT count(*) FROM interactions'),
        users: lists.users,
        items: items.length,
      },
    };
  },
};
