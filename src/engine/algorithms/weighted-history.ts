import { DAY_MS } from '../../state/user-histories.js';
import { requestPools } from '../candidate-pool.js';
import { ScoreAccumulator } from '../id-marks.js';
import type { Algorithm } from './algorithm.js';
import { categoryCandidates } from './category-popularity.js';
import { scoreNeighbours } from './neighbour-scores.js';

/** A history event counts half as much a week later. */
const HALF_LIFE_MS = 7 * DAY_MS;

/** Only the user's strongest items are expanded: the rest add little but cost 50 neighbours each. */
const MAX_SEEDS = 20;

const itemWeights = new ScoreAccumulator();

/**
 * The user's 30-day history, each event weighted by its type's weight and its recency, expanded through
 * the items' co-occurrence neighbours; popularity fills the rest.
 */
export const weightedHistory: Algorithm = {
  name: 'weighted-history',
  description:
    "The user's last 30 days of interactions weighted by type and recency, expanded through item neighbours, filled from geo-aware popularity.",
  logicTypes: ['user-to-item'],
  geoLift: false,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const { history, tenant, now } = context;
    if (!history) return requestPools.take(0);
    const start = history.windowStart(now);
    itemWeights.begin(history.length - start);
    for (let i = start; i < history.length; i++) {
      const recency = Math.pow(0.5, Math.max(0, now - history.ts[i]) / HALF_LIFE_MS);
      itemWeights.add(history.items[i], history.weights[i] * recency);
    }
    // Strongest first; equal weights by lower id.
    const strongest = requestPools.take(itemWeights.size);
    for (let k = 0; k < itemWeights.size; k++) strongest.push(itemWeights.idAt(k), itemWeights.sumAt(k));
    strongest.rankPrefix(MAX_SEEDS);
    const seeds: number[] = [];
    const seedWeights: number[] = [];
    const seedCount = Math.min(MAX_SEEDS, strongest.length);
    for (let k = 0; k < seedCount; k++) {
      seeds.push(strongest.ids[k]);
      seedWeights.push(strongest.scores[k]);
    }
    const pool = scoreNeighbours(tenant.neighbours, seeds, seedWeights);
    return pool.length > 0 ? pool : categoryCandidates(context, seeds);
  },
};
