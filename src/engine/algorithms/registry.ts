import type { ModelName } from '../../artifacts/layout.js';
import type { LogicType } from '../../contract/scenarios.js';
import type { TenantState } from '../../state/tenant-state.js';
import type { Algorithm } from './algorithm.js';
import { categoryPopularity } from './category-popularity.js';
import { coOccurrence, multiSeedCoOccurrence } from './co-occurrence.js';
import { matrixFactorization } from './matrix-factorization.js';
import { recentlyViewed } from './recently-viewed.js';
import { multiSeedHybrid, vectorSimilarity } from './vector-similarity.js';
import { weightedHistory } from './weighted-history.js';

export const ALGORITHMS: readonly Algorithm[] = [
  weightedHistory,
  matrixFactorization,
  coOccurrence,
  multiSeedCoOccurrence,
  multiSeedHybrid,
  vectorSimilarity,
  recentlyViewed,
  categoryPopularity,
];

const DEFAULTS: Record<LogicType, Algorithm> = {
  'user-to-item': weightedHistory,
  'item-to-item': coOccurrence,
  'items-to-items': multiSeedCoOccurrence,
  'recently-viewed': recentlyViewed,
  'similar-products': vectorSimilarity,
};

export function defaultAlgorithm(logicType: LogicType): Algorithm {
  return DEFAULTS[logicType];
}

/**
 * The models a tenant's requests rank from: those of every logic type's default algorithm and of the
 * algorithms its scenarios name. The daemon builds these, and only these.
 */
export function modelsInUse(tenant: TenantState): ModelName[] {
  const models = new Set<ModelName>();
  for (const algorithm of Object.values(DEFAULTS)) algorithm.models.forEach((model) => models.add(model));
  for (const scenario of tenant.config.scenarios.values()) {
    const algorithm = scenario.algorithm ? findAlgorithm(scenario.algorithm) : undefined;
    algorithm?.models.forEach((model) => models.add(model));
  }
  return [...models];
}

/** Why `name` cannot rank lists of `logicType` (a scenario's `algorithm`), or undefined when it can. */
export function algorithmProblem(logicType: LogicType, name: string): string | undefined {
  const algorithm = findAlgorithm(name);
  if (algorithm?.logicTypes.includes(logicType)) return undefined;
  const serving = ALGORITHMS.filter((a) => a.logicTypes.includes(logicType)).map((a) => a.name);
  const what = algorithm ? `'${name}' does not rank ${logicType} lists` : `there is no algorithm '${name}'`;
  return `${what}; ${logicType} is ranked by ${serving.join(', ')} (GET /recommendations/algorithms/${logicType})`;
}

export function findAlgorithm(name: string): Algorithm | undefined {
  return ALGORITHMS.find((algorithm) => algorithm.name === name);
}

/** The listing of `GET /recommendations/algorithms[/:logicType]`. */
export function describeAlgorithms(logicType?: LogicType) {
  return ALGORITHMS.filter((algorithm) => !logicType || algorithm.logicTypes.includes(logicType)).map(
    (algorithm) => ({
      name: algorithm.name,
      logicTypes: [...algorithm.logicTypes],
      isDefault: Object.fromEntries(algorithm.logicTypes.map((type) => [type, DEFAULTS[type] === algorithm])),
      description: algorithm.description,
    }),
  );
}
