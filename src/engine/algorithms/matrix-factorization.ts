import { foldInUser } from '../../linalg/dense.js';
import { requestPools } from '../candidate-pool.js';
import { IdMarks } from '../id-marks.js';
import type { Algorithm } from './algorithm.js';
import { weightedHistory, weighHistory } from './weighted-history.js';

const history = new IdMarks();

/**
 * ALS factors: the user's vector is solved from their weighted 30-day history against the model's item
 * factors (the same solve that trained it), and every item the model knows is scored by its dot product.
 * Users new since the build are served alike. Without a factor model, weighted-history's candidates.
 */
export const matrixFactorization: Algorithm = {
  name: 'matrix-factorization',
  description:
    "Implicit-feedback ALS factors: the user's 30-day history folded into a user vector, every item scored by its factors.",
  logicTypes: ['user-to-item'],
  models: ['factors'],
  geoLift: false,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const model = context.tenant.factors;
    if (!model) return weightedHistory.candidates(context);
    if (!context.history) return requestPools.take(0);
    const { seeds, seedWeights } = weighHistory(context);
    const known = seeds.filter((id) => id < model.size && model.known[id] === 1);
    const weights = seeds.flatMap((id, i) =>
      id < model.size && model.known[id] === 1 ? [seedWeights[i]] : [],
    );
    if (known.length === 0) return weightedHistory.candidates(context);
    const { k, itemFactors } = model;
    const user = foldInUser(
      itemFactors,
      k,
      model.itemGram,
      known,
      weights,
      known.length,
      model.regularization,
      model.alpha,
    );
    history.begin(context.tenant.catalog.size);
    for (const id of seeds) history.mark(id);
    const pool = requestPools.take(Math.min(model.size, 4096));
    for (let id = 0; id < model.size; id++) {
      if (model.known[id] === 0 || history.has(id)) continue;
      let score = 0;
      const row = id * k;
      for (let f = 0; f < k; f++) score += user[f] * itemFactors[row + f];
      if (score > 0) pool.push(id, score);
    }
    return pool;
  },
};
