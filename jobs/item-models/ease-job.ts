import { MODEL_FORMATS } from '../../src/artifacts/formats.js';
import type { LakeDb } from '../lake/lake-db.js';
import type { ModelJob } from '../model-job.js';
import { keepLargest, transposeLists } from './csr.js';
import { buildEase, type ItemGram } from './ease.js';
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

/** The Gram matrix of the binary user × item matrix over the chosen items, read column by column. */
async function itemGram(lake: LakeDb): Promise<ItemGram> {
  const counts = await lake.db.runAndReadAll('SELECT e, n FROM ease_items');
  const [es = [], ns = []] = counts.getColumns();
  const items = es.length;
  const diagonal = new Float64Array(items);
  es.forEach((e, i) => (diagonal[Number(e)] = Number(ns[i])));
  // The pair counts, joined once: sized by a count of the table, then read in chunks.
  await lake.db.run(`
    CREATE OR REPLACE TEMP TABLE ease_pairs AS
      SELECT x.e AS a, y.e AS b, count(*)::FLOAT AS n
        FROM ease_user_items x JOIN ease_user_items y ON x.who = y.who AND x.e < y.e
       GROUP BY x.e, y.e`);
  const pairs = await lake.count('SELECT count(*) FROM ease_pairs');
  const pairA = new Int32Array(pairs);
  const pairB = new Int32Array(pairs);
  const pairCount = new Float32Array(pairs);
  const result = await lake.db.stream('SELECT a, b, n FROM ease_pairs');
  let at = 0;
  for (
    let chunk = await result.fetchChunk();
    chunk && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  ) {
    const [a, b, c] = [0, 1, 2].map((column) => chunk.getColumnVector(column));
    for (let row = 0; row < chunk.rowCount; row++) {
      pairA[at] = a.getItem(row) as number;
      pairB[at] = b.getItem(row) as number;
      pairCount[at++] = c.getItem(row) as number;
    }
  }
  await lake.db.run('DROP TABLE ease_pairs');
  return { items, diagonal, pairA, pairB, pairCount };
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
