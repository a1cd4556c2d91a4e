import type { Algorithm } from './algorithm.js';
import { categoryCandidates } from './category-popularity.js';
import { scoreNeighbours } from './neighbour-scores.js';

export const coOccurrence: Algorithm = {
  name: 'co-occurrence',
  description: 'Items interacted with by the same people as the seed item (cosine over their audiences).',
  logicTypes: ['item-to-item'],
  models: ['cooccurrence'],
  geoLift: true,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const { tenant, seeds } = context;
    const pool = scoreNeighbours(tenant.neighbours, seeds, [1]);
    return pool.length > 0 ? pool : categoryCandidates(context, seeds);
  },
};

export const multiSeedCoOccurrence: Algorithm = {
  name: 'multi-seed-co-occurrence',
  description: 'Co-occurrence neighbours of several seed items, summed; the seeds themselves are excluded.',
  logicTypes: ['items-to-items'],
  models: ['cooccurrence'],
  geoLift: true,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const { tenant, seeds } = context;
    const pool = scoreNeighbours(
      tenant.neighbours,
      seeds,
      seeds.map(() => 1),
    );
    return pool.length > 0 ? pool : categoryCandidates(context, seeds);
  },
};
