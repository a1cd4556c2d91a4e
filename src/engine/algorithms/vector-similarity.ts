import {
  HYBRID_DEFAULTS,
  VECTOR_SEARCH_DEFAULTS,
  type HybridSettings,
  type Quantization,
} from '../../contract/vectors.js';
import { SERVABLE, categoryCodeOf } from '../../state/item-catalog.js';
import type { TenantState } from '../../state/tenant-state.js';
import type { VectorMatches, VectorSearchOptions } from '../../vector/tenant-vectors.js';
import { requestPools, type CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { IdMarks, ScoreAccumulator } from '../id-marks.js';
import type { Algorithm } from './algorithm.js';
import { categoryCandidates } from './category-popularity.js';
import { scoreNeighbours } from './neighbour-scores.js';

/** A request's vector search settings: the scenario's `vectorSettings` over the tenant's defaults. */
export interface ResolvedVectorSettings {
  ef: number;
  threshold: number;
  quantization: Quantization;
  /** Category codes vector candidates must have; none: any. */
  categories?: Set<number>;
  /** The settings as text, for remembering searches by them. */
  key: string;
}

export function vectorSettingsOf(context: PipelineContext): ResolvedVectorSettings {
  const { tenant } = context;
  const defaults = tenant.config.vectorSearchDefaults;
  const scenario = context.config.scenario?.vectorSettings;
  const ef = scenario?.hnsw_ef ?? defaults.hnsw_ef ?? VECTOR_SEARCH_DEFAULTS.hnsw_ef;
  const threshold =
    scenario?.score_threshold ?? defaults.score_threshold ?? VECTOR_SEARCH_DEFAULTS.score_threshold;
  const quantization =
    scenario?.quantization ??
    scenario?.quantization_type ??
    defaults.quantization ??
    VECTOR_SEARCH_DEFAULTS.quantization;
  let categories: Set<number> | undefined;
  if (scenario?.filter_categories) {
    const table = tenant.catalog.categoryTable;
    categories = new Set(
      scenario.filter_categories.map((name) => table.find(name)).filter((code) => code > 0),
    );
  }
  const key = `${ef}|${threshold}|${quantization}|${scenario?.filter_categories?.join('\u0001') ?? ''}`;
  return { ef, threshold, quantization, categories, key };
}

const seedMarks = new IdMarks();

/**
 * The `want` items nearest `query` that may be candidates: in the catalog and available, of the settings'
 * categories, not a seed.
 */
export function nearestItems(
  tenant: TenantState,
  query: Float32Array,
  want: number,
  settings: ResolvedVectorSettings,
  seeds: readonly number[],
): VectorMatches {
  return tenant.vectors.search(query, want, searchOptions(tenant, settings, seeds));
}

/** What a candidate must be: in the catalog and available, of the settings' categories, not a seed. */
function searchOptions(
  tenant: TenantState,
  settings: ResolvedVectorSettings,
  seeds: readonly number[],
): VectorSearchOptions {
  const { rankingCodes } = tenant.catalog;
  seedMarks.begin(tenant.catalog.size);
  for (const seed of seeds) seedMarks.mark(seed);
  const categories = settings.categories;
  return {
    ef: settings.ef,
    threshold: settings.threshold,
    quantization: settings.quantization,
    accept: (id) =>
      (rankingCodes[id] & SERVABLE) !== 0 &&
      !seedMarks.has(id) &&
      (categories === undefined || categories.has(categoryCodeOf(rankingCodes[id]))),
  };
}

/** Remembered seed searches of a tenant, valid while its vectors and catalog are as they were. */
interface Remembered {
  vectorsVersion: number;
  catalogVersion: number;
  searches: Map<string, VectorMatches>;
}
const remembered = new WeakMap<TenantState, Remembered>();
const REMEMBERED_SEARCHES = 10_000;

/**
 * The nearest items of one seed item, remembered: a product page asks for the same seed again and again,
 * and until the tenant's vectors or items change the answer is the same.
 */
function nearestToItem(
  tenant: TenantState,
  seed: number,
  want: number,
  enough: number,
  settings: ResolvedVectorSettings,
): VectorMatches | undefined {
  let memory = remembered.get(tenant);
  if (
    !memory ||
    memory.vectorsVersion !== tenant.vectors.version ||
    memory.catalogVersion !== tenant.catalog.version
  ) {
    memory = {
      vectorsVersion: tenant.vectors.version,
      catalogVersion: tenant.catalog.version,
      searches: new Map(),
    };
    remembered.set(tenant, memory);
  }
  const key = `${seed}|${want}|${enough}|${settings.key}`;
  const known = memory.searches.get(key);
  if (known) return known;
  const found = tenant.vectors.nearestTo(seed, want, searchOptions(tenant, settings, [seed]), enough);
  if (!found) return undefined;
  if (memory.searches.size >= REMEMBERED_SEARCHES) memory.searches.clear();
  memory.searches.set(key, found);
  return found;
}

/** Matches as candidates: their similarities are above zero (TenantVectors.search), as scores must be. */
function poolOf(matches: VectorMatches, size: number): CandidatePool {
  const pool = requestPools.take(size);
  for (let i = 0; i < matches.ids.length; i++) pool.push(matches.ids[i], matches.scores[i]);
  return pool;
}

export const vectorSimilarity: Algorithm = {
  name: 'vector-similarity',
  description:
    "Items whose embedded text is nearest the seed item's (cosine); the seed's category popularity when it has no vector or no similar item.",
  logicTypes: ['similar-products'],
  models: ['vectors'],
  geoLift: true,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const { tenant, seeds } = context;
    if (seeds.length === 0) return requestPools.take(0);
    // The list of the seed serves when it has the count asked for; the pipeline fills the rest.
    const matches = nearestToItem(
      tenant,
      seeds[0],
      context.poolSize,
      context.config.count,
      vectorSettingsOf(context),
    );
    return matches && matches.ids.length > 0
      ? poolOf(matches, context.poolSize)
      : categoryCandidates(context, seeds);
  },
};

/** The mean of the seeds' vectors, normalised; undefined when no seed has one. */
function seedsVector(tenant: TenantState, seeds: readonly number[]): Float32Array | undefined {
  let sum: Float32Array | undefined;
  for (const seed of seeds) {
    const vector = tenant.vectors.vectorOf(seed);
    if (!vector) continue;
    sum ??= new Float32Array(vector.length);
    for (let d = 0; d < vector.length; d++) sum[d] += vector[d];
  }
  if (!sum) return undefined;
  let norm = 0;
  for (const value of sum) norm += value * value;
  if (norm === 0) return undefined;
  const scale = 1 / Math.sqrt(norm);
  for (let d = 0; d < sum.length; d++) sum[d] *= scale;
  return sum;
}

/** multi-seed-hybrid's settings: the scenario's `hybridSettings` over HYBRID_DEFAULTS. */
function hybridSettingsOf(
  context: PipelineContext,
): Required<
  Pick<HybridSettings, 'strategy' | 'rrfK' | 'coTopK' | 'vectorTopK' | 'categoryBoost' | 'coWeight'>
> {
  return Object.assign({}, HYBRID_DEFAULTS, stripUndefined(context.config.scenario?.hybridSettings ?? {}));
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** multi-seed-hybrid's fused scores: one request at a time (the pipeline is synchronous). */
const fused = new ScoreAccumulator();

export const multiSeedHybrid: Algorithm = {
  name: 'multi-seed-hybrid',
  description:
    "Co-occurrence neighbours and vector neighbours of several seed items, fused by reciprocal rank (hybridSettings); items of the seeds' categories boosted.",
  logicTypes: ['items-to-items'],
  models: ['cooccurrence', 'vectors'],
  geoLift: true,
  popularityFill: true,
  scored: true,
  candidates(context) {
    const { tenant, seeds } = context;
    const settings = hybridSettingsOf(context);
    // Co-occurrence's best coTopK, ranked.
    const co = scoreNeighbours(
      tenant.neighbours,
      seeds,
      seeds.map(() => 1),
    );
    const coIds: number[] = [];
    const coScores: number[] = [];
    if (settings.coTopK > 0 && co.length > 0) {
      co.rankPrefix(settings.coTopK);
      for (let i = 0; i < Math.min(settings.coTopK, co.length); i++) {
        coIds.push(co.ids[i]);
        coScores.push(co.scores[i]);
      }
    }
    const query = settings.vectorTopK > 0 ? seedsVector(tenant, seeds) : undefined;
    const vector = query
      ? nearestItems(tenant, query, settings.vectorTopK, vectorSettingsOf(context), seeds)
      : { ids: [], scores: [] };
    if (coIds.length === 0 && vector.ids.length === 0) return categoryCandidates(context, seeds);
    fused.begin(coIds.length + vector.ids.length);
    const add = (id: number, score: number) => fused.add(id, score);
    if (settings.strategy === 'weighted') {
      const coMax = coScores[0] ?? 1;
      coIds.forEach((id, i) => add(id, (settings.coWeight * coScores[i]) / coMax));
      vector.ids.forEach((id, i) => add(id, (1 - settings.coWeight) * Math.max(vector.scores[i], 0)));
    } else {
      coIds.forEach((id, rank) => add(id, 1 / (settings.rrfK + rank + 1)));
      vector.ids.forEach((id, rank) => add(id, 1 / (settings.rrfK + rank + 1)));
    }
    const { rankingCodes } = tenant.catalog;
    const seedCategories = new Set(
      seeds.map((seed) => categoryCodeOf(rankingCodes[seed])).filter((code) => code !== 0),
    );
    const pool = requestPools.take(fused.size);
    for (let k = 0; k < fused.size; k++) {
      const id = fused.idAt(k);
      const score = fused.sumAt(k);
      if (score <= 0) continue;
      const boosted = seedCategories.has(categoryCodeOf(rankingCodes[id]))
        ? score * (1 + settings.categoryBoost)
        : score;
      pool.push(id, boosted);
    }
    return pool;
  },
};
