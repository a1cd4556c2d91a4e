import type { Experiment, Rule, Scenario, Segmentation } from '../contract/scenarios.js';
import type { EmbeddingTemplate, SearchSynonym, VectorDefaults } from '../contract/vectors.js';

/** The kinds of configuration document a tenant keeps, by the name of their map. */
export type ConfigCollection =
  | 'scenarios'
  | 'rules'
  | 'segmentations'
  | 'embeddingTemplates'
  | 'vectorDefaults'
  | 'experiments'
  | 'searchSynonyms';

export type ConfigDocument =
  Scenario | Rule | Segmentation | EmbeddingTemplate | VectorDefaults | Experiment | SearchSynonym;

/** The key of the one document of `vectorDefaults`. */
export const VECTOR_DEFAULTS_KEY = 'defaults';

/** A tenant's configuration resources, as stored; `version` bumps on every change (cache keys use it). */
export class TenantConfig {
  readonly scenarios = new Map<string, Scenario>();
  readonly rules = new Map<string, Rule>();
  readonly segmentations = new Map<string, Segmentation>();
  readonly embeddingTemplates = new Map<string, EmbeddingTemplate>();
  /** At most one document, under VECTOR_DEFAULTS_KEY. */
  readonly vectorDefaults = new Map<string, VectorDefaults>();
  readonly experiments = new Map<string, Experiment>();
  readonly searchSynonyms = new Map<string, SearchSynonym>();
  version = 0;

  /** The tenant's vector search defaults (`PUT /catalog/vector-defaults`); {} until set. */
  get vectorSearchDefaults(): VectorDefaults {
    return this.vectorDefaults.get(VECTOR_DEFAULTS_KEY) ?? {};
  }

  put(collection: ConfigCollection, key: string, document: ConfigDocument): void {
    (this[collection] as Map<string, ConfigDocument>).set(key, document);
    this.version++;
  }

  remove(collection: ConfigCollection, key: string): void {
    this[collection].delete(key);
    this.version++;
  }
}

/** Values worked out from configurations (see configDerived): one slot per kind of value. */
export type ConfigSlot<T> = WeakMap<TenantConfig, { version: number; value: T }>;

/**
 * The value `compute` works out from the configuration, kept in `slot` until the configuration's version
 * changes (a configuration dropped drops it too).
 */
export function configDerived<T>(
  config: TenantConfig,
  slot: ConfigSlot<T>,
  compute: (config: TenantConfig) => T,
): T {
  let memo = slot.get(config);
  if (memo === undefined || memo.version !== config.version) {
    memo = { version: config.version, value: compute(config) };
    slot.set(config, memo);
  }
  return memo.value;
}
