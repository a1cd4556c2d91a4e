import type { Rule, Scenario, Segmentation } from '../contract/scenarios.js';

/** The kinds of configuration document a tenant keeps, by the name of their map. */
export type ConfigCollection = 'scenarios' | 'rules' | 'segmentations';

export type ConfigDocument = Scenario | Rule | Segmentation;

/** A tenant's configuration resources, as stored; `version` bumps on every change (cache keys use it). */
export class TenantConfig {
  readonly scenarios = new Map<string, Scenario>();
  readonly rules = new Map<string, Rule>();
  readonly segmentations = new Map<string, Segmentation>();
  version = 0;

  put(collection: ConfigCollection, key: string, document: ConfigDocument): void {
    (this[collection] as Map<string, ConfigDocument>).set(key, document);
    this.version++;
  }

  remove(collection: ConfigCollection, key: string): void {
    this[collection].delete(key);
    this.version++;
  }
}
