import { requestPools } from '../candidate-pool.js';
import type { Algorithm } from './algorithm.js';
import { scoreNeighbours } from './neighbour-scores.js';
import { weightedHistory, weighHistory } from './weighted-history.js';

/**
 * EASE: the user's weighted 30-day history through the EASE model's item weights (README, "Batch
 * models"). Items outside the model (it covers the most used ones) are scored by weighted-history's
 * co-occurrence, after EASE's own candidates; without an EASE model, weighted-history alone.
 */
export const ease: Algorithm = {
  name: 'ease',
  description:
    "The user's 30-day history through EASE item-item weights (a closed-form regression over the most used items), filled from co-occurrence and popularity.",
  logicTypes: ['user-to-item'],
  models: ['ease', 'cooccurrence'],
  geoLift: false,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const model = context.tenant.neighbourModel('ease');
    if (model.neighbours.length === 0) return weightedHistory.candidates(context);
    if (!context.history) return requestPools.take(0);
    const { seeds, seedWeights } = weighHistory(context);
    const pool = scoreNeighbours(model, seeds, seedWeights);
    return pool.length > 0 ? pool : weightedHistory.candidates(context);
  },
};
