import type { Rule, Scenario, Segmentation } from '../contract/scenarios.js';

/** A tenant's configuration resources, as stored; `version` bumps on every change (cache keys use it). */
export class TenantConfig {
  readonly scenarios = new Map<string, Scenario>();
  readonly rules = new Map<string, Rule>();
  readonly segmentations = new Map<string, Segmentation>();
  version = 0;
}
