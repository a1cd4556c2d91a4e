import { MODEL_FORMATS } from '../../src/artifacts/formats.js';
import type { LakeDb } from '../lake/lake-db.js';
import type { ModelJob } from '../model-job.js';
import { keepLargest, transposeLists } from './csr.js';
import { buildEase, type ItemGram } from './ease.js';
import { grown, PairSums, readUserItemLists } from './item-pairs.js';
import { selectUserItems, type EventSelection } from './user-items.js';

export interface EaseParameters extends EventSelection {
  /** L2 regularisation of the item-item regression. */
  lambda: number;
  /** Neighbours kept per item, the largest positive weights. */
  neighbours: number;
  /**
   * The model covers the most used items, at most this many: its cost is a dense inverse of this order
   * (4,000 items: about 8 s and 250 MB on two cores; 8,000: about a minute and 700 MB).
   */
  maxItems: number;
  /** `target`: each item keeps the history items that weigh most on it; `source`: each item its strongest targets. */
  prune: 'target' | 'source';
  /** The share of the kept weights that serve, those of largest magnitude over the whole model (1: all). */
  keepShare: number;
}

/** The Gram matrix of the binary user × item matrix over the chosen items, from each item's pairs. */
async function itemGram(lake: LakeDb): Promise<ItemGram> {
  const items = await lake.count('SELECT count(*) FROM ease_items');
  const lists = await readUserItemLists(
    lake,
    'SELECT (dense_rank() OVER (ORDER BY who) - 1)::INTEGER, e, 1.0::DOUBLE FROM ease_user_items',
    items,
  );
  const diagonal = new Float64Array(items);
  for (let e = 0; e < items; e++) diagonal[e] = lists.itemOffsets[e + 1] - lists.itemOffsets[e];
  const sums = new PairSums(lists);
  let pairA = new Int32Array(1024);
  let pairB = new Int32Array(1024);
  let pairCount = new Float32Array(1024);
  let length = 0;
  for (let a = 0; a < items; a++) {
    const count = sums.of(a);
    if (length + count > pairA.length) {
      const size = Math.max(Math.ceil(pairA.length * 1.5), length + count);
      [pairA, pairB, pairCount] = [
        grown(pairA, size, length),
        grown(pairB, size, length),
        grown(pairCount, size, length),
      ];
    }
    // Each pair once, as a < b.
    for (let t = 0; t < count; t++) {
      const b = sums.touched[t];
      if (b < a) continue;
      pairA[length] = a;
      pairB[length] = b;
      pairCount[length++] = sums.sums[b];
    }
  }
  return {
    items,
    diagonal,
    pairA: pairA.slice(0, length),
    pairB: pairB.slice(0, length),
    pairCount: pairCount.slice(0, length),
  };
}

/**
 * EASE (docs/batch-models.md): the closed-form item-item regression B = I − P·diag(1/diag(P)) with
 * P = (XᵀX + λI)⁻¹ over the most used items, served as each item's strongest weights of either sign, so
 * a user's score for an item is the sum of its weights from the user's history.
 */
export const easeJob: ModelJob<EaseParameters> = {
  model: 'ease',
  defaults: {
    lambda: 200,
    neighbours: 750,
    maxItems: 5_000,
    prune: 'target',
    keepShare: 0.3,
    windowDays: 90,
    halfLifeDays: 0,
    itemsPerUser: 2_000,
  },
  async build(lake, parameters, context) {
    await selectUserItems(lake, parameters, context.now);
    await lake.db.run(`
      CREATE OR REPLACE TEMP TABLE ease_items AS
        SELECT m.item_id, f.idx, f.n, (row_number() OVER (ORDER BY f.n DESC, m.item_id) - 1)::INTEGER AS e
          FROM item_users f JOIN model_items m USING (idx)
         QUALIFY e < ${parameters.maxItems}`);
    await lake.db.run(`
      CREATE OR REPLACE TEMP TABLE ease_user_items AS
        SELECT u.who, i.e FROM user_items u JOIN ease_items i USING (idx)`);
    const gram = await itemGram(lake);
    const lists = await buildEase(gram, {
      lambda: parameters.lambda,
      neighbours: parameters.neighbours,
      negative: true,
      byTarget: parameters.prune === 'target',
      threads: context.threads,
    });
    const items = await lake.texts('SELECT item_id FROM ease_items ORDER BY e');
    // Pruned before the transpose, which then sorts only the entries kept (the same ones either way).
    const kept = keepLargest(lists, parameters.keepShare);
    const bySource = parameters.prune === 'target' ? transposeLists(kept) : kept;
    const encoded = MODEL_FORMATS.ease.encode({ items, ...bySource });
    return {
      ...encoded,
      parameters: { ...parameters },
      source: {
        interactions: await lake.count('SELECT count(*) FROM interactions'),
        users: await lake.count('SELECT count(DISTINCT who) FROM user_items'),
        items: items.length,
      },
    };
  },
};
