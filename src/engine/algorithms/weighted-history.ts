import { DAY_MS } from '../../state/user-histories.js';
import { CandidatePool } from '../candidate-pool.js';
import type { Algorithm } from './algorithm.js';
import { categoryCandidates } from './category-popularity.js';
import { scoreNeighbours } from './neighbour-scores.js';

/** A history event counts half as much a week later. */
const HALF_LIFE_MS = 7 * DAY_MS;

/** Only the user's strongest items are expanded: the rest add little but cost 50 neighbours each. */
const MAX_SEEDS = 20;

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
    if (!history) return new CandidatePool(16);
    const weights = new Map<number, number>();
    for (let i = history.windowStart(now); i < history.length; i++) {
      const recency = Math.pow(0.5, Math.max(0, now - history.ts[i]) / HALF_LIFE_MS);
      const item = history.items[i];
      weights.set(item, (weights.get(item) ?? 0) + history.weights[i] * recency);
    }
    const seeds = [...weights.keys()]
      .sort((a, b) => weights.get(b)! - weights.get(a)! || a - b)
      .slice(0, MAX_SEEDS);
    const pool = scoreNeighbours(
      tenant.neighbours,
      seeds,
      seeds.map((seed) => weights.get(seed)!),
      tenant.catalog.size,
    );
    return pool.length > 0 ? pool : categoryCandidates(context, seeds);
  },
};
