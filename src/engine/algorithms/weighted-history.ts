import { DAY_MS } from '../../state/user-histories.js';
import { requestPools } from '../candidate-pool.js';
import { ScoreAccumulator } from '../id-marks.js';
import type { PipelineContext } from '../context.js';
import type { Algorithm } from './algorithm.js';
import { categoryCandidates } from './category-popularity.js';
import { scoreNeighbours } from './neighbour-scores.js';

/**
 * A history event counts half as much this long after it happened: late events lead a little, and the
 * whole 30-day window counts (an event 30 days old keeps 79% of its weight). Shorter half-lives cost
 * NDCG@10 on both shared datasets (docs/batch-models.md, "Evaluation").
 */
export const HALF_LIFE_MS = 90 * DAY_MS;

/**
 * The user's strongest distinct items expanded, at most: every item of any ordinary history (a cap of 500
 * cost the heaviest MovieLens users a tenth of their NDCG@10), and a bound on a request's work.
 */
export const MAX_SEEDS = 2_000;

const itemWeights = new ScoreAccumulator();

/**
 * The user's strongest distinct items of the 30-day window (at most MAX_SEEDS), best first: each item's
 * weight is the sum over its events of the type's weight times the recency decay.
 */
export function weighHistory(context: PipelineContext): { seeds: number[]; seedWeights: number[] } {
  const { history, now } = context;
  const seeds: number[] = [];
  const seedWeights: number[] = [];
  if (!history) return { seeds, seedWeights };
  const { items, ts, weights } = history.columns;
  const start = history.windowStart(now);
  const end = history.end;
  itemWeights.begin(end - start);
  for (let i = start; i < end; i++) {
    const recency = Math.pow(0.5, Math.max(0, now - ts[i]) / HALF_LIFE_MS);
    itemWeights.add(items[i], weights[i] * recency);
  }
  // Strongest first; equal weights by lower id.
  const strongest = requestPools.take(itemWeights.size);
  for (let k = 0; k < itemWeights.size; k++) strongest.push(itemWeights.idAt(k), itemWeights.sumAt(k));
  strongest.rankPrefix(MAX_SEEDS);
  const seedCount = Math.min(MAX_SEEDS, strongest.length);
  for (let k = 0; k < seedCount; k++) {
    seeds.push(strongest.ids[k]);
    seedWeights.push(strongest.scores[k]);
  }
  return { seeds, seedWeights };
}

/**
 * The user's 30-day history, each item weighted by its events' type weights and recency, through the
 * tenant's item-item model: EASE weights where an EASE model is built (it covers the most used items;
 * docs/batch-models.md), co-occurrence neighbours otherwise; popularity fills the rest.
 */
export const weightedHistory: Algorithm = {
  name: 'weighted-history',
  description:
    "The user's last 30 days of interactions weighted by type and recency, through item-item weights (EASE where built, else co-occurrence), filled from geo-aware popularity.",
  logicTypes: ['user-to-item'],
  models: ['ease', 'cooccurrence'],
  geoLift: false,
  popularityFill: true,
  scored: true,
  candidates(context) {
    if (!context.history) return requestPools.take(0);
    const { seeds, seedWeights } = weighHistory(context);
    const ease = context.tenant.neighbourModel('ease');
    if (ease.neighbours.length > 0) {
      const pool = scoreNeighbours(ease, seeds, seedWeights);
      if (pool.length > 0) return pool;
    }
    const pool = scoreNeighbours(context.tenant.neighbours, seeds, seedWeights);
    return pool.length > 0 ? pool : categoryCandidates(context, seeds);
  },
};
