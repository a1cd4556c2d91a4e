import { ApiError } from '../contract/errors.js';
import type { AnalyticsQuery } from '../contract/analytics.js';

const DAY_MS = 86_400_000;
/** The longest window a query may cover. */
const MAX_WINDOW_DAYS = 3_660;
/** Without from and to, the last 30 UTC days, today included (CONTRACT.md, "Analytics"). */
const DEFAULT_WINDOW_DAYS = 30;

/** A window of whole UTC days: events with fromMs ≤ ts < untilMs, and its days in order. */
export interface Window {
  fromMs: number;
  untilMs: number;
  days: string[];
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The window of a query: `to` defaults to today, `from` to 29 days before `to` (both inclusive). */
export function windowOf(query: Pick<AnalyticsQuery, 'from' | 'to'>, now = Date.now()): Window {
  const toMs = query.to ? Date.parse(`${query.to}T00:00:00Z`) : Date.parse(`${dayOf(now)}T00:00:00Z`);
  const fromMs = query.from
    ? Date.parse(`${query.from}T00:00:00Z`)
    : toMs - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS;
  if (fromMs > toMs) throw new ApiError('INVALID_QUERY', 'from must not be after to');
  const count = (toMs - fromMs) / DAY_MS + 1;
  if (count > MAX_WINDOW_DAYS)
    throw new ApiError('INVALID_QUERY', `a window covers at most ${MAX_WINDOW_DAYS} days`);
  const days = Array.from({ length: count }, (_, i) => dayOf(fromMs + i * DAY_MS));
  return { fromMs, untilMs: toMs + DAY_MS, days };
}

/** Rounded to 4 places, as the answers give rates and sums of money. */
function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** A rate as the contract gives it: a fraction rounded to 4 places, 0 when the denominator is 0. */
export function rate(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : round4(numerator / denominator);
}

/** A sum of money as the answers give it: rounded to 4 places, so that sums of prices show no binary noise. */
export function money(value: unknown): number {
  return round4(Number(value ?? 0));
}
