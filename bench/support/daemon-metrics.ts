import { request } from 'undici';
import { OPERATOR_KEY } from './bench-daemon.js';

/** A histogram's count and sum for one set of labels, in the Prometheus text of `GET /metrics`. */
export interface HistogramTotals {
  labels: Record<string, string>;
  count: number;
  sum: number;
}

/** The model builds a daemon's scheduler ran so far, by model and outcome (docs/configuration.md, "Health and metrics"). */
export interface ModelBuilds {
  model: string;
  outcome: string;
  count: number;
  /** Their seconds, summed: export, build and swap. */
  seconds: number;
}

const LABEL = /(\w+)="([^"]*)"/g;
const BUILDS = 'nextrec_model_build_duration_seconds';

/** The daemon's `GET /metrics`, as text. */
export async function scrapeMetrics(url: string): Promise<string> {
  const response = await request(`${url}/metrics`, { headers: { 'x-api-key': OPERATOR_KEY } });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET /metrics answered ${response.statusCode}: ${text}`);
  return text;
}

/** The count and sum of each set of labels of histogram `name`. */
export function histogramTotals(text: string, name: string): HistogramTotals[] {
  const line = new RegExp(`^${name}_(count|sum)(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
  const totals = new Map<string, HistogramTotals>();
  for (const [, field, labelText = '', value] of text.matchAll(line)) {
    const entry = totals.get(labelText) ?? {
      labels: Object.fromEntries(Array.from(labelText.matchAll(LABEL), ([, label, text]) => [label, text])),
      count: 0,
      sum: 0,
    };
    entry[field as 'count' | 'sum'] = Number(value);
    totals.set(labelText, entry);
  }
  return [...totals.values()];
}

/** What each set of labels in `after` counted since `before` (those that counted nothing left out). */
export function totalsSince(
  after: readonly HistogramTotals[],
  before: readonly HistogramTotals[],
): HistogramTotals[] {
  const key = (entry: HistogramTotals) => JSON.stringify(entry.labels);
  const earlier = new Map(before.map((entry) => [key(entry), entry]));
  return after.flatMap((entry) => {
    const { count = 0, sum = 0 } = earlier.get(key(entry)) ?? {};
    return entry.count > count
      ? [{ labels: entry.labels, count: entry.count - count, sum: entry.sum - sum }]
      : [];
  });
}

/** A gauge without labels, or undefined when the text has none. */
export function gaugeValue(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

/** The builds in the Prometheus text of `GET /metrics`. */
export function parseModelBuilds(text: string): ModelBuilds[] {
  return histogramTotals(text, BUILDS).map(toBuilds);
}

/** From the daemon's `GET /metrics`. */
export async function modelBuilds(url: string): Promise<ModelBuilds[]> {
  return parseModelBuilds(await scrapeMetrics(url));
}

/** The builds in `after` that `before` did not count yet (those with none left out). */
export function buildsSince(after: readonly ModelBuilds[], before: readonly ModelBuilds[]): ModelBuilds[] {
  const totals = (builds: readonly ModelBuilds[]) =>
    builds.map(({ model, outcome, count, seconds }) => ({ labels: { model, outcome }, count, sum: seconds }));
  return totalsSince(totals(after), totals(before)).map(toBuilds);
}

function toBuilds({ labels, count, sum }: HistogramTotals): ModelBuilds {
  return { model: labels.model ?? '', outcome: labels.outcome ?? '', count, seconds: Number(sum.toFixed(3)) };
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
