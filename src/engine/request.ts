import type { ItemsToItemsBody, LegacyQuery, RecommendationBody } from '../contract/recommendations.js';
import { OVERRIDE_FIELDS } from '../contract/recommendations.js';
import type { LogicType } from '../contract/scenarios.js';
import type { SearchPart } from './search.js';

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
  /**
   * Items never to list (external ids): a next page's earlier pages, a batch's earlier lists (docs/guide.md,
   * "The next page"). A request with them bypasses the answer cache.
   */
  exclude?: string[];
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
