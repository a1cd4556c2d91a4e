import { ApiError } from '../contract/errors.js';
import { EXPERIMENT, RULE, SCENARIO, SEGMENTATION } from '../contract/scenarios.js';
import { EMBEDDING_TEMPLATE, SEARCH_SYNONYM } from '../contract/vectors.js';
import { algorithmProblem } from '../engine/algorithms/registry.js';
import { ConfigDocuments } from './config-documents.js';

export const scenarios = new ConfigDocuments({
  kind: 'scenario',
  keyField: 'slug',
  schema: SCENARIO,
  collection: 'scenarios',
  notFoundCode: 'SCENARIO_NOT_FOUND',
  // The vectors job reads scenarios' vector settings from the lake (docs/batch-models.md).
  vectorConfig: 'scenarios',
  // A named algorithm must exist and rank the scenario's logic type: never silently the default.
  check: (scenario) => {
    const problem = scenario.algorithm && algorithmProblem(scenario.logicType, scenario.algorithm);
    if (problem) {
      throw new ApiError('INVALID_BODY', `invalid body at algorithm: ${problem}`, [
        { path: 'algorithm', message: problem, code: 'invalid_value' },
      ]);
    }
  },
});

export const rules = new ConfigDocuments({
  kind: 'rule',
  keyField: 'slug',
  schema: RULE,
  collection: 'rules',
});

export const segmentations = new ConfigDocuments({
  kind: 'segmentation',
  keyField: 'segmentationId',
  schema: SEGMENTATION,
  collection: 'segmentations',
});

export const embeddingTemplates = new ConfigDocuments({
  kind: 'embedding-template',
  keyField: 'slug',
  schema: EMBEDDING_TEMPLATE,
  collection: 'embeddingTemplates',
  vectorConfig: 'templates',
});

export const experiments = new ConfigDocuments({
  kind: 'experiment',
  keyField: 'slug',
  schema: EXPERIMENT,
  collection: 'experiments',
});

export const searchSynonyms = new ConfigDocuments({
  kind: 'search-synonym',
  keyField: 'id',
  schema: SEARCH_SYNONYM,
  collection: 'searchSynonyms',
});

/** Every configuration resource kind, for loading them all at start. */
export const CONFIG_RESOURCES = [
  scenarios,
  rules,
  segmentations,
  embeddingTemplates,
  experiments,
  searchSynonyms,
] as const;
