import { categoryCodeOf, type ItemCatalog } from '../../state/item-catalog.js';
import { requestPools, type CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { IdMarks } from '../id-marks.js';
import { popularityRanking, type PopularityRanking } from '../popularity.js';
import type { Algorithm } from './algorithm.js';

/**
 * A popularity ranking split by category: the positions in the ranking of category code c's items are
 * positions[starts[c]..starts[c + 1]), most popular first. A request then reads its categories' items
 * instead of scanning the whole ranking for them, which for a small category means most of the catalog.
 */
interface CategoryPositions {
  starts: Int32Array;
  positions: Int32Array;
}

/** Per ranking, built on first use: a ranking is replaced (not changed) when popularity moves. */
const byRanking = new WeakMap<PopularityRanking, CategoryPositions>();

function categoryPositions(ranking: PopularityRanking, catalog: ItemCatalog): CategoryPositions {
  const known = byRanking.get(ranking);
  if (known) return known;
  const { rankingCodes } = catalog;
  const codes = catalog.categoryTable.size;
  const starts = new Int32Array(codes + 1);
  for (const id of ranking.ids) starts[categoryCodeOf(rankingCodes[id]) + 1]++;
  for (let code = 0; code < codes; code++) starts[code + 1] += starts[code];
  const next = starts.slice(0, codes);
  const positions = new Int32Array(ranking.ids.length);
  ranking.ids.forEach((id, position) => (positions[next[categoryCodeOf(rankingCodes[id])]++] = position));
  const built = { starts, positions };
  byRanking.set(ranking, built);
  return built;
}

const seedMarks = new IdMarks();

/**
 * Items of the seeds' categories, most popular first (stage 4 makes them geo-aware). The fallback
 * for a seed without neighbours, and the similar-products algorithm until vector search exists.
 */
export function categoryCandidates(context: PipelineContext, seeds: readonly number[]): CandidatePool {
  const { catalog } = context.tenant;
  const { rankingCodes } = catalog;
  const pool = requestPools.take(context.poolSize);
  const codes: number[] = [];
  for (const seed of seeds) {
    const code = categoryCodeOf(rankingCodes[seed]);
    if (code !== 0 && !codes.includes(code)) codes.push(code);
  }
  if (codes.length === 0) return pool;
  seedMarks.begin(catalog.size);
  for (const seed of seeds) seedMarks.mark(seed);
  // Global popularity: stage 4 applies the geo lift to these candidates (once).
  const ranking = popularityRanking(context.tenant, undefined, context.now);
  const { starts, positions } = categoryPositions(ranking, catalog);
  // The categories' lists merged by ranking position (each item is in one list, so none comes twice); a
  // code the ranking predates has no list yet.
  const cursors = codes.map((code) => (code + 1 < starts.length ? starts[code] : 0));
  const ends = codes.map((code) => (code + 1 < starts.length ? starts[code + 1] : 0));
  while (pool.length < context.poolSize) {
    let best = -1;
    for (let c = 0; c < codes.length; c++) {
      if (cursors[c] < ends[c] && (best < 0 || positions[cursors[c]] < positions[cursors[best]])) best = c;
    }
    if (best < 0) break;
    const position = positions[cursors[best]++];
    const id = ranking.ids[position];
    // The ranking may be up to a second older than the catalog: an item since moved is left out.
    if (categoryCodeOf(rankingCodes[id]) === codes[best] && !seedMarks.has(id))
      pool.push(id, ranking.scores[position]);
  }
  return pool;
}

export const categoryPopularity: Algorithm = {
  name: 'category-popularity',
  description:
    "Popular items of the seed items' categories (geo-aware); for users, of their recent categories.",
  logicTypes: ['similar-products', 'item-to-item', 'items-to-items', 'user-to-item'],
  models: [],
  geoLift: true,
  popularityFill: true,
  scored: true,
  candidates(context) {
    if (context.seeds.length > 0) return categoryCandidates(context, context.seeds);
    const history = context.history;
    if (!history) return requestPools.take(0);
    const recent = Array.from(history.columns.items.subarray(history.windowStart(context.now), history.end));
    return categoryCandidates(context, recent);
  },
};
