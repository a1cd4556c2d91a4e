import { request } from 'undici';
import { OPERATOR_KEY } from './bench-daemon.js';

/** The model builds a daemon's scheduler ran so far, by model and outcome (README, "Health and metrics"). */
export interface ModelBuilds {
  model: string;
  outcome: string;
  count: number;
  /** Their seconds, summed: export, build and swap. */
  seconds: number;
}

const BUILDS = /^nextrec_model_build_duration_seconds_(count|sum)\{([^}]*)\} (\S+)$/gm;
const LABEL = /(\w+)="([^"]*)"/g;

/** From the daemon's `GET /metrics`. */
export async function modelBuilds(url: string): Promise<ModelBuilds[]> {
  const response = await request(`${url}/metrics`, { headers: { 'x-api-key': OPERATOR_KEY } });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET /metrics answered ${response.statusCode}: ${text}`);
  return parseModelBuilds(text);
}

/** The builds in the Prometheus text of `GET /metrics`. */
export function parseModelBuilds(text: string): ModelBuilds[] {
  const builds = new Map<string, ModelBuilds>();
  for (const [, field, labels, value] of text.matchAll(BUILDS)) {
    const { model = '', outcome = '' } = Object.fromEntries(
      Array.from(labels.matchAll(LABEL), ([, name, label]) => [name, label]),
    );
    const key = `${model} ${outcome}`;
    const entry = builds.get(key) ?? { model, outcome, count: 0, seconds: 0 };
    if (field === 'count') entry.count = Number(value);
    else entry.seconds = Number(value);
    builds.set(key, entry);
  }
  return [...builds.values()];
}

/** The builds in `after` that `before` did not count yet (those with none left out). */
export function buildsSince(after: readonly ModelBuilds[], before: readonly ModelBuilds[]): ModelBuilds[] {
  return after.flatMap((entry) => {
    const earlier = before.find((b) => b.model === entry.model && b.outcome === entry.outcome);
    const count = entry.count - (earlier?.count ?? 0);
    const seconds = Number((entry.seconds - (earlier?.seconds ?? 0)).toFixed(3));
    return count > 0 ? [{ model: entry.model, outcome: entry.outcome, count, seconds }] : [];
  });
}

/** `model ×count` (outcome when not ok), or 'none'. */
export function describeBuilds(builds: readonly ModelBuilds[]): string {
  if (builds.length === 0) return 'none';
  return builds
    .map(
      ({ model, outcome, count }) =>
        `${model}${outcome === 'ok' ? '' : ` (${outcome})`}${count > 1 ? ` ×${count}` : ''}`,
    )
    .join(', ');
}
