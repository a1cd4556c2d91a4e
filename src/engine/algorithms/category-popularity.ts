import { requestPools, type CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { IdMarks } from '../id-marks.js';
import { popularityRanking } from '../popularity.js';
import type { Algorithm } from './algorithm.js';

const categoriesSeen = new IdMarks();

/**
 * Items of the seeds' categories, most popular first (stage 4 makes them geo-aware). The fallback
 * for a seed without neighbours, and the similar-products algorithm until vector search exists.
 */
export function categoryCandidates(context: PipelineContext, seeds: readonly number[]): CandidatePool {
  const { catalog } = context.tenant;
  const categories = new Set<string>();
  for (const seed of seeds) {
    const category = catalog.categories[seed];
    if (category !== null) categories.add(category);
  }
  const pool = requestPools.take(context.poolSize);
  if (categories.size === 0) return pool;
  categoriesSeen.begin(catalog.size);
  for (const seed of seeds) categoriesSeen.mark(seed);
  // Global popularity: stage 4 applies the geo lift to these candidates (once).
  const ranking = popularityRanking(context.tenant, undefined, context.now);
  for (let i = 0; i < ranking.ids.length && pool.length < context.poolSize; i++) {
    const id = ranking.ids[i];
    const category = catalog.categories[id];
    if (category !== null && categories.has(category) && categoriesSeen.mark(id))
      pool.push(id, ranking.scores[i]);
  }
  return pool;
}

export const categoryPopularity: Algorithm = {
  name: 'category-popularity',
  description:
    "Popular items of the seed items' categories (geo-aware); for users, of their recent categories.",
  logicTypes: ['similar-products', 'item-to-item', 'items-to-items', 'user-to-item'],
  geoLift: true,
  popularityFill: true,
  scored: true,
  candidates(context) {
    if (context.seeds.length > 0) return categoryCandidates(context, context.seeds);
    const history = context.history;
    if (!history) return requestPools.take(0);
    const recent = Array.from(history.items.subarray(history.windowStart(context.now), history.length));
    return categoryCandidates(context, recent);
  },
};
