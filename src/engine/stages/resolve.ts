import { LRUCache } from 'lru-cache';
import { ApiError } from '../../contract/errors.js';
import type { Constraints, LogicType, Rule, Scenario } from '../../contract/scenarios.js';
import { geoLiftFor } from '../../models/geo-lift.js';
import { compileBooster, compileFilter, joinFilterClauses, splitFilterClauses } from '../../nextql/index.js';
import { configDerived, type ConfigSlot } from '../../state/tenant-config.js';
import type { TenantState } from '../../state/tenant-state.js';
import { defaultAlgorithm, findAlgorithm } from '../algorithms/registry.js';
import { assignScenario, type Assignment } from '../experiments.js';
import { expressionContext } from '../expression-context.js';
import { vectorSearch } from '../search.js';
import type { EffectiveConfig, PipelineContext } from '../context.js';
import type { Overrides, RecommendationRequest, RotatedItems } from '../request.js';

const DEFAULT_COUNT = 10;

/** Filters split into clauses once per text: the same few filters arrive with every request. */
const clauses = new LRUCache<string, string[]>({ max: 1000 });

function clausesOf(filter: string): string[] {
  let split = clauses.get(filter);
  if (!split) clauses.set(filter, (split = splitFilterClauses(filter)));
  return split;
}

/** The seed each logic type needs (CONTRACT "Codes": a missing one is 400 MISSING_SEED). */
function requireSeeds(logicType: LogicType, request: RecommendationRequest): void {
  const missing =
    ((logicType === 'user-to-item' || logicType === 'recently-viewed') && !request.userId) ||
    ((logicType === 'item-to-item' || logicType === 'similar-products') && !request.itemId) ||
    (logicType === 'items-to-items' && !request.itemIds?.length);
  if (missing) {
    const field =
      logicType === 'items-to-items'
        ? 'itemIds'
        : logicType === 'item-to-item' || logicType === 'similar-products'
          ? 'itemId'
          : 'userId';
    throw new ApiError('MISSING_SEED', `${logicType} needs ${field}`);
  }
}

function seedIds(tenant: TenantState, logicType: LogicType, request: RecommendationRequest): number[] {
  const known = (externalId: string) => {
    const id = tenant.catalog.idOf(externalId);
    return id >= 0 && tenant.catalog.inCatalog[id] === 1 ? id : -1;
  };
  if (logicType === 'item-to-item' || logicType === 'similar-products') {
    const id = known(request.itemId!);
    if (id < 0) throw new ApiError('ITEM_NOT_FOUND', `item '${request.itemId}' does not exist`);
    return [id];
  }
  if (logicType === 'items-to-items') {
    const ids = [...new Set(request.itemIds!.map(known).filter((id) => id >= 0))];
    if (ids.length === 0) throw new ApiError('ITEM_NOT_FOUND', 'none of the itemIds exists');
    return ids;
  }
  return [];
}

function byPriority(a: Rule, b: Rule): number {
  return b.priority - a.priority || (a.slug < b.slug ? -1 : 1);
}

function linkedRules(tenant: TenantState, slugs: readonly string[]): Rule[] {
  return slugs.flatMap((slug) => tenant.config.rules.get(slug) ?? []).sort(byPriority);
}

/**
 * Constraints: the scenario's own, then constraint rules of the stored scenario for what it leaves unset
 * (higher priority first). They are never changed per request.
 */
function effectiveConstraints(tenant: TenantState, scenario: Scenario | undefined): Constraints {
  const merged: Constraints = {};
  for (const rule of linkedRules(tenant, scenario?.rulesSlugs ?? [])) {
    if (rule.type !== 'constraint' || !rule.constraints) continue;
    for (const [key, value] of Object.entries(rule.constraints)) {
      if (value !== undefined && merged[key as keyof Constraints] === undefined)
        Object.assign(merged, { [key]: value });
    }
  }
  return Object.assign(merged, definedOnly(scenario?.constraints ?? {}));
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function pick<T>(override: T | undefined, fallback: T): T {
  return override === undefined ? fallback : override;
}

/** The effective configuration but for count, which every request sets. */
type PlacementConfig = Omit<EffectiveConfig, 'count'>;

function placementConfig(
  tenant: TenantState,
  scenario: Scenario | undefined,
  logicType: LogicType,
  overrides: Overrides,
): PlacementConfig {
  const named = scenario?.algorithm ? findAlgorithm(scenario.algorithm) : undefined;
  const algorithm = named && named.logicTypes.includes(logicType) ? named : defaultAlgorithm(logicType);

  const rules = linkedRules(tenant, pick(overrides.rulesSlugs, scenario?.rulesSlugs ?? null) ?? []);
  const filters = rules.filter((rule) => rule.type === 'filter').map((rule) => rule.expression!);
  const scenarioFilter = pick(overrides.filter, scenario?.filter ?? null);
  if (scenarioFilter) filters.push(scenarioFilter);
  const filterClauses = filters.flatMap(clausesOf);
  const boosterTexts = rules.filter((rule) => rule.type === 'booster').map((rule) => rule.expression!);
  boosterTexts.push(...(pick(overrides.boosters, scenario?.boosters ?? null) ?? []));

  const segmentationId = pick(overrides.segmentationId, scenario?.segmentationId ?? null);
  const itemsPerSegment =
    overrides.itemsPerSegment === null ? 1 : pick(overrides.itemsPerSegment, scenario?.itemsPerSegment);

  return {
    scenario,
    logicType,
    algorithm,
    minItems: scenario?.minItems ?? 0,
    filterClauses,
    filter: filterClauses.length === 0 ? undefined : compileFilter(joinFilterClauses(filterClauses)),
    boosters: algorithm.scored ? boosterTexts.map(compileBooster) : [],
    constraints: effectiveConstraints(tenant, scenario),
    autoRelaxFilters: pick(overrides.autoRelaxFilters, scenario?.autoRelaxFilters ?? false),
    relaxEntireFilterOnEmpty: pick(
      overrides.relaxEntireFilterOnEmpty,
      scenario?.relaxEntireFilterOnEmpty ?? false,
    ),
    autoRelaxConstraints: scenario?.autoRelaxConstraints ?? false,
    segmentation: segmentationId ? tenant.config.segmentations.get(segmentationId) : undefined,
    itemsPerSegment,
    autoExpandSegments: scenario?.autoExpandSegments ?? true,
  };
}

/** A placement's configuration, and the effective configurations built from it, per count. */
interface PlainPlacement {
  placement: PlacementConfig;
  byCount: Map<number, EffectiveConfig>;
}

/**
 * Effective configurations of requests without overrides (most of them), by tenant configuration,
 * scenario (or logic type) and count, until that configuration changes: resolving rules, constraints and
 * expressions (the whole filter included) anew cost as much as a stage. Keyed by objects and constants,
 * whose hashes are stored, rather than by a string built per request.
 */
const plainConfigs: ConfigSlot<Map<Scenario | LogicType, PlainPlacement>> = new WeakMap();

function plainEffectiveConfig(
  tenant: TenantState,
  scenario: Scenario | undefined,
  logicType: LogicType,
  count: number,
): EffectiveConfig {
  const byPlacement = configDerived(tenant.config, plainConfigs, () => new Map());
  let plain = byPlacement.get(scenario ?? logicType);
  if (!plain) {
    plain = { placement: placementConfig(tenant, scenario, logicType, {}), byCount: new Map() };
    byPlacement.set(scenario ?? logicType, plain);
  }
  let config = plain.byCount.get(count);
  if (!config) plain.byCount.set(count, (config = withCount(plain.placement, count)));
  return config;
}

function withCount(placement: PlacementConfig, count: number): EffectiveConfig {
  return Object.assign({}, placement, { count } satisfies Partial<EffectiveConfig>);
}

/** A search's configuration: its scenario's, ranked by hybrid search, the extracted filter joined last. */
function searchConfig(placement: PlacementConfig, extracted: string | null, count: number): EffectiveConfig {
  const filterClauses = extracted
    ? [...placement.filterClauses, ...clausesOf(extracted)]
    : placement.filterClauses;
  return Object.assign({}, placement, {
    algorithm: vectorSearch,
    filterClauses,
    filter: filterClauses.length === 0 ? undefined : compileFilter(joinFilterClauses(filterClauses)),
    count,
  } satisfies Partial<EffectiveConfig>);
}

/** The dense ids of the known items a request excludes; undefined without any. */
function excludedIds(tenant: TenantState, exclude: readonly string[] | undefined): Set<number> | undefined {
  if (exclude === undefined || exclude.length === 0) return undefined;
  const ids = new Set<number>();
  for (const externalId of exclude) {
    const id = tenant.catalog.idOf(externalId);
    if (id >= 0) ids.add(id);
  }
  return ids;
}

/** Rotation's factors by dense id (engine/rotation.ts); undefined without rotated items. */
function rotationFactors(rotated: RotatedItems | undefined): Map<number, number> | undefined {
  if (rotated === undefined || rotated.ids.length === 0) return undefined;
  const factors = new Map<number, number>();
  for (let i = 0; i < rotated.ids.length; i++) factors.set(rotated.ids[i], rotated.factors[i]);
  return factors;
}

/** Stage 1: the scenario, the algorithm, the seeds and the effective configuration of the request. */
export function resolve(tenant: TenantState, request: RecommendationRequest, now: number): PipelineContext {
  let scenario: Scenario | undefined;
  if (request.scenario !== undefined) {
    scenario = tenant.config.scenarios.get(request.scenario);
    if (!scenario) throw new ApiError('SCENARIO_NOT_FOUND', `scenario '${request.scenario}' does not exist`);
  }
  // A running experiment on the scenario serves the user's variant instead (docs/guide.md, "Analytics and experiments").
  let assignment: Assignment | undefined;
  if (scenario && !request.search)
    ({ scenario, assignment } = assignScenario(tenant.config, scenario, request.userId));
  const { overrides, search } = request;
  // A search has no seed: its scenario lends it filters, boosters and constraints.
  const logicType = scenario?.logicType ?? request.logicType ?? (search ? 'similar-products' : undefined);
  if (!logicType) throw new ApiError('MISSING_SEED', 'a logicType is required when no scenario is given');
  if (!search) requireSeeds(logicType, request);
  const seeds = search ? [] : seedIds(tenant, logicType, request);

  const count = Math.min(request.count ?? DEFAULT_COUNT, scenario?.maxItems ?? Infinity);
  const config: EffectiveConfig = search
    ? searchConfig(placementConfig(tenant, scenario, logicType, overrides), search.filter, count)
    : Object.keys(overrides).length === 0
      ? plainEffectiveConfig(tenant, scenario, logicType, count)
      : withCount(placementConfig(tenant, scenario, logicType, overrides), count);
  const identity = request.userId;
  return {
    tenant,
    request,
    config,
    now,
    assignment,
    identity,
    history: identity === undefined ? undefined : tenant.histories.get(identity),
    seeds,
    // recently-viewed ignores country for rank (and cache).
    geo: logicType === 'recently-viewed' ? undefined : geoLiftFor(tenant, request.country, now),
    poolSize: Math.max(3 * count, 100),
    expressionContext: expressionContext(tenant, logicType, request),
    excluded: excludedIds(tenant, request.exclude),
    rotationFactors: rotationFactors(request.rotated),
  };
}
