import type { CompiledFilter } from '../nextql/index.js';
import { SERVABLE, categoryCodeOf } from '../state/item-catalog.js';
import type { TenantState } from '../state/tenant-state.js';
import type { Algorithm } from './algorithms/algorithm.js';
import { nearestItems, vectorSettingsOf } from './algorithms/vector-similarity.js';
import { requestPools } from './candidate-pool.js';
import type { PipelineContext } from './context.js';
import { forEachKept } from './match-bits.js';
import type { RankedList } from './context.js';
import { popularityRanking } from './popularity.js';
import { renderList } from './response-body.js';
import type { ResolvedProjection } from './projection.js';
import type { SearchPart } from './request.js';

/** Facets count the matches among this many semantic candidates (CONTRACT.md, "Search"). */
const FACET_CANDIDATES = 1000;

/**
 * Hybrid search's candidates: the items nearest the query's semantic text, or, when it has none (the text
 * was all filter, or empty), the catalog by popularity, so that the filter alone still searches.
 */
export const vectorSearch: Algorithm = {
  name: 'hybrid-search',
  description: 'Items nearest the semantic part of a search text, under the filter extracted from it.',
  logicTypes: [],
  models: ['vectors'],
  geoLift: false,
  popularityFill: false,
  scored: true,
  candidates(context) {
    // The list comes from the same candidates as the facets, however many the filter rejects.
    const ranked = semanticCandidates(context);
    const pool = requestPools.take(ranked.ids.length);
    // Similarities are above zero (TenantVectors.search), and so are popularity scores.
    for (let i = 0; i < ranked.ids.length; i++) pool.push(ranked.ids[i], ranked.scores[i]);
    return pool;
  },
};

type Ranked = { ids: ArrayLike<number>; scores: ArrayLike<number> };

/** A request's semantic candidates, computed once for its list and its facets. */
const semantic = new WeakMap<SearchPart, Ranked>();

/** The FACET_CANDIDATES items nearest the semantic text, or the most popular when it has none. */
function semanticCandidates(context: PipelineContext): Ranked {
  const { tenant, request } = context;
  const search = request.search!;
  let ranked = semantic.get(search);
  if (!ranked) {
    if (search.vector) {
      ranked = nearestItems(tenant, search.vector, FACET_CANDIDATES, vectorSettingsOf(context), []);
    } else {
      const ranking = popularityRanking(tenant, undefined, context.now);
      const length = Math.min(FACET_CANDIDATES, ranking.ids.length);
      ranked = { ids: ranking.ids.subarray(0, length), scores: ranking.scores.subarray(0, length) };
    }
    semantic.set(search, ranked);
  }
  return ranked;
}

export interface Facets {
  categories: { value: string; count: number }[];
  priceRanges: { value: string; count: number }[];
}

/** Price bucket bounds are taken from this 1-2-5 series, scaled to the prices found. */
const NICE_STEPS = [1, 2, 5];
const PRICE_BUCKETS = 5;

/** The bucket bounds for prices up to `max`: about PRICE_BUCKETS ranges of one round width. */
function priceBounds(max: number): number[] {
  const rough = max / PRICE_BUCKETS;
  const magnitude = 10 ** Math.floor(Math.log10(Math.max(rough, 1e-9)));
  const width = magnitude * (NICE_STEPS.find((step) => step * magnitude >= rough) ?? 10);
  const bounds: number[] = [];
  for (let bound = width; bound < max; bound += width) bounds.push(Number(bound.toPrecision(12)));
  return bounds;
}

function formatPrice(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Readable labels: "under 20", "20 to 40", …, "80 and over". */
function priceLabel(bounds: readonly number[], bucket: number): string {
  if (bounds.length === 0) return 'all prices';
  if (bucket === 0) return `under ${formatPrice(bounds[0])}`;
  if (bucket === bounds.length) return `${formatPrice(bounds[bucket - 1])} and over`;
  return `${formatPrice(bounds[bucket - 1])} to ${formatPrice(bounds[bucket])}`;
}

/**
 * The facets of a search: over the available items among the top FACET_CANDIDATES semantic candidates
 * that the request's filter keeps, the count per category (most first) and per price range (ascending).
 */
export function searchFacets(context: PipelineContext, filter: CompiledFilter | undefined): Facets {
  const { catalog } = context.tenant;
  const ranked = semanticCandidates(context);
  const ids: number[] = [];
  for (let i = 0; i < ranked.ids.length; i++) {
    const id = ranked.ids[i];
    if ((catalog.rankingCodes[id] & SERVABLE) !== 0) ids.push(id);
  }
  let kept = ids;
  if (filter) {
    const keep = new Uint8Array(ids.length);
    forEachKept(
      filter,
      catalog,
      Int32Array.from(ids),
      context.now,
      (i, matches) => (keep[i] = matches ? 1 : 0),
    );
    kept = ids.filter((_, i) => keep[i] === 1);
  }
  const byCategory = new Map<string, number>();
  const prices: number[] = [];
  const price = catalog.attribute('price');
  for (const id of kept) {
    const code = categoryCodeOf(catalog.rankingCodes[id]);
    const category = code === 0 ? null : catalog.categoryTable.nameOf(code);
    if (category !== null) byCategory.set(category, (byCategory.get(category) ?? 0) + 1);
    const value = price?.[id];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) prices.push(value);
  }
  const categories = [...byCategory]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([value, count]) => ({ value, count }));
  const bounds = priceBounds(Math.max(0, ...prices));
  const counts = new Array<number>(bounds.length + 1).fill(0);
  for (const price of prices) {
    let bucket = 0;
    while (bucket < bounds.length && price >= bounds[bucket]) bucket++;
    counts[bucket]++;
  }
  const priceRanges = counts
    .map((count, bucket) => ({ value: priceLabel(bounds, bucket), count }))
    .filter((range) => range.count > 0);
  return { categories, priceRanges };
}

/**
 * The JSON of a search answer: the ranked items as a recommendation list renders them, the facets and
 * what the text was taken to mean. Ends before the recommId, as `renderList` does.
 */
export function renderSearch(
  tenant: TenantState,
  list: RankedList,
  facets: Facets,
  search: SearchPart,
  projection: ResolvedProjection,
  /** Where the dense ids of the items rendered go (see `renderList`). */
  rendered?: number[],
): string {
  const listed = renderList(tenant.catalog, list, projection, rendered);
  const query = {
    original: search.query,
    semanticText: search.semanticText,
    extractedFilters: search.filter,
  };
  return `${listed},"facets":${JSON.stringify(facets)},"query":${JSON.stringify(query)}`;
}
