import type { Experiment, Scenario } from '../contract/scenarios.js';
import type { TenantConfig } from '../state/tenant-config.js';

/** Which variant served a request of a running experiment (the response's `experiment`). */
export interface Assignment {
  slug: string;
  variant: string;
}

/** FNV-1a over the text, as a fraction in [0, 1). */
function unitHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  // A final mix, so that ids differing in their last characters spread over the whole range.
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  return (hash >>> 0) / 2 ** 32;
}

/** The variant a user falls into: sticky, `hash(experimentSlug + userId)` over the cumulative weights. */
export function variantOf(experiment: Experiment, userId: string): Experiment['variants'][number] {
  const total = experiment.variants.reduce((sum, variant) => sum + variant.weight, 0);
  let point = unitHash(`${experiment.slug}\u0000${userId}`) * total;
  let last = experiment.variants[0];
  for (const variant of experiment.variants) {
    if (variant.weight <= 0) continue;
    point -= variant.weight;
    if (point < 0) return variant;
    last = variant;
  }
  // Rounding may leave the point at the very end: the last variant that can be assigned takes it.
  return last;
}

/**
 * The scenario that serves a request for `scenario` by `userId` (docs/guide.md, "Analytics and experiments"): a running
 * experiment on it (the first by slug) assigns the user a variant, whose scenario serves, when it exists.
 */
export function assignScenario(
  config: TenantConfig,
  scenario: Scenario,
  userId: string | undefined,
): { scenario: Scenario; assignment?: Assignment } {
  if (userId === undefined || config.experiments.size === 0) return { scenario };
  const running = [...config.experiments.values()]
    .filter((experiment) => experiment.status === 'running' && experiment.baseScenario === scenario.slug)
    .sort((a, b) => (a.slug < b.slug ? -1 : 1))[0];
  if (!running) return { scenario };
  const variant = variantOf(running, userId);
  const served = config.scenarios.get(variant.scenario);
  if (!served) return { scenario };
  return { scenario: served, assignment: { slug: running.slug, variant: served.slug } };
}
