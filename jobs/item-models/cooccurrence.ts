import { MODEL_FORMATS } from '../../src/artifacts/formats.js';
import type { ModelJob } from '../model-job.js';
import { readCsr } from './csr.js';
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
 * number of users, d: a user's number of items):
 * - cosine: Σ v_a v_b / (sqrt(Σ v_a² Σ v_b²) + shrink)
 * - jaccard: |U_a ∩ U_b| / |U_a ∪ U_b|
 * - rp3beta: Σ_{u ∈ U_a ∩ U_b} (1 / (n_a d_u))^alpha / n_b^beta, a three-step random walk item → user →
 *   item with a popularity penalty on where it ends.
 */
function scoreSql(parameters: CooccurrenceParameters): { pairs: string; weight: string; join?: string } {
  switch (parameters.similarity) {
    case 'cosine':
      return {
        pairs: 'sum(x.v * y.v) AS s',
        weight: `p.s / (sqrt(fa.sq * fb.sq) + ${parameters.shrink})`,
      };
    case 'jaccard':
      return { pairs: 'count(*) AS s', weight: 'p.s / (fa.n + fb.n - p.s)' };
    case 'rp3beta':
      return {
        pairs: `sum(pow(d.d, -${parameters.alpha})) AS s`,
        join: 'JOIN user_degrees d ON d.who = x.who',
        weight: `p.s * pow(fa.n, -${parameters.alpha}) * pow(fb.n, -${parameters.beta})`,
      };
  }
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
    const { pairs, weight, join = '' } = scoreSql(parameters);
    await lake.db.run(`
      CREATE OR REPLACE TEMP TABLE user_degrees AS SELECT who, count(*) AS d FROM user_items GROUP BY who`);
    const lists = await readCsr(
      lake.db,
      `WITH pairs AS (
         SELECT x.idx AS a, y.idx AS b, ${pairs}
           FROM user_items x JOIN user_items y ON x.who = y.who AND x.idx <> y.idx
           ${join}
          GROUP BY ALL),
       scored AS (
         SELECT p.a, p.b, (${weight})::FLOAT AS w
           FROM pairs p JOIN item_users fa ON fa.idx = p.a JOIN item_users fb ON fb.idx = p.b)
       SELECT a, b, w FROM scored WHERE w > 0
       QUALIFY row_number() OVER (PARTITION BY ${parameters.prune === 'target' ? 'b ORDER BY w DESC, a' : 'a ORDER BY w DESC, b'}) <= ${parameters.neighbours}
       ORDER BY a, w DESC, b`,
      items.length,
    );
    const encoded = MODEL_FORMATS.cooccurrence.encode({ items, ...lists });
    return {
      ...encoded,
      parameters: { ...parameters },
      source: {
        interactions: await lake.count('SELECT count(*) FROM interactions'),
        users: await lake.count('SELECT count(*) FROM user_degrees'),
        items: items.length,
      },
    };
  },
};
