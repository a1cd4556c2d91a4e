import type { ItemsToItemsBody, LegacyQuery, RecommendationBody } from '../contract/recommendations.js';
import { OVERRIDE_FIELDS } from '../contract/recommendations.js';
import type { LogicType } from '../contract/scenarios.js';

/** What hybrid search adds to a request: the text, its two parts, and the semantic part's vector. */
export interface SearchPart {
  query: string;
  semanticText: string;
  /** The nextQL filter extracted from the text, or null. */
  filter: string | null;
  /** The semantic text's vector; absent when the text has nothing semantic (then popularity ranks). */
  vector?: Float32Array;
}

/**
 * The items a request's identity was returned within the window, each with its score factor, by dense
 * id: a replica of the serving state has the same dense ids (state/state-changes.ts), and typed arrays
 * cost the ranking thread's message little.
 */
export interface RotatedItems {
  ids: Int32Array;
  /** `(1 − rate)^k` for an item returned k times; 0 for rate 1. */
  factors: Float64Array;
}

/** Request-time overrides; `undefined` means "keep the scenario's". */
export interface Overrides {
  filter?: string | null;
  boosters?: string[] | null;
  rulesSlugs?: string[] | null;
  segmentationId?: string | null;
  itemsPerSegment?: number | null;
  autoRelaxFilters?: boolean;
  relaxEntireFilterOnEmpty?: boolean;
}

export interface Projection {
  returnProperties?: boolean;
  includedProperties?: string[];
}

/** One recommendation request, whichever route it came through. */
export interface RecommendationRequest {
  scenario?: string;
  logicType?: LogicType;
  userId?: string;
  itemId?: string;
  itemIds?: string[];
  count?: number;
  country?: string;
  noCache: boolean;
  overrides: Overrides;
  projection: Projection;
  /** Set for hybrid search (`GET /recommendations/search`), which has no seed. */
  search?: SearchPart;
  /** Rotation (docs/guide.md, "Rotation"); undefined: the scenario's, else off. */
  rotationRate?: number;
  /** The rotation window in seconds; undefined: the scenario's, else 7200. */
  rotationTime?: number;
  /** The items rotation demotes, with their factors, worked out before ranking (engine/rotation.ts). */
  rotated?: RotatedItems;
  /** The user's stored document that context_user() reads; null: no user row (engine/expression-context.ts). */
  userContext?: UserContext | null;
  /**
   * Items never to list (external ids): a next page's earlier pages, a batch's earlier lists (docs/guide.md,
   * "The next page"). A request with them bypasses the answer cache.
   */
  exclude?: string[];
}

/** A user's stored document as nextQL's context_user() reads it. */
export interface UserContext {
  externalId: string;
  attributes: Record<string, unknown>;
  createdAt: string;
}

function overridesOf(source: Overrides): Overrides {
  const overrides: Overrides = {};
  for (const field of OVERRIDE_FIELDS) {
    if (source[field] !== undefined) Object.assign(overrides, { [field]: source[field] });
  }
  return overrides;
}

export function fromBody(body: RecommendationBody): RecommendationRequest {
  return {
    scenario: body.scenario,
    logicType: body.logicType,
    userId: body.userId,
    itemId: body.itemId,
    itemIds: body.itemIds,
    count: body.count,
    country: body.country,
    noCache: body.noCache ?? false,
    rotationRate: body.rotationRate,
    rotationTime: body.rotationTime,
    overrides: overridesOf(body),
    projection: { returnProperties: body.returnProperties, includedProperties: body.includedProperties },
  };
}

export function splitPaths(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  return text
    .split(',')
    .map((path) => path.trim())
    .filter((path) => path.length > 0);
}

/** A legacy GET route: the seed comes from the path, everything else from the query. */
export function fromLegacyQuery(
  logicType: LogicType,
  seed: { userId?: string; itemId?: string },
  query: LegacyQuery,
): RecommendationRequest {
  return {
    scenario: query.scenario,
    logicType,
    userId: seed.userId ?? query.userId,
    itemId: seed.itemId,
    count: query.count,
    country: query.country,
    noCache: query.noCache ?? false,
    rotationRate: query.rotationRate,
    rotationTime: query.rotationTime,
    overrides: overridesOf(query as Overrides),
    projection: {
      returnProperties: query.returnProperties,
      includedProperties: splitPaths(query.includedProperties),
    },
  };
}

/** `POST /recommendations/items-to-items`: body fields win over the query's. */
export function fromItemsToItems(body: ItemsToItemsBody, query: LegacyQuery): RecommendationRequest {
  const fromQuery = fromLegacyQuery('items-to-items', {}, query);
  return Object.assign({}, fromQuery, {
    itemIds: body.itemIds,
    count: body.count ?? fromQuery.count,
    country: body.country ?? fromQuery.country,
    noCache: body.noCache ?? fromQuery.noCache,
    overrides: Object.assign({}, fromQuery.overrides, overridesOf(body)),
    projection: {
      returnProperties: body.returnProperties ?? fromQuery.projection.returnProperties,
      includedProperties: body.includedProperties ?? fromQuery.projection.includedProperties,
    },
  } satisfies Partial<RecommendationRequest>);
}
