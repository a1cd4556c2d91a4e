/**
 * Pure helpers of the dashboard: formatting, date ranges, credentials and data shaping. Nothing here
 * touches the DOM, so the unit tests import this file as it is (test/unit/dashboard).
 */

import type { ScenarioSummary } from './types.js';

/** Numbers are shown the same way whatever the browser's locale, so that tests can read them back. */
const INTEGER = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatCount(value: number): string {
  return INTEGER.format(value);
}

const MONEY = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * A sum of prices (1234.5 → "1,234.50"), in the shop's own currency; `signed` puts "+" before a positive
 * value.
 */
export function formatMoney(value: number | null | undefined, signed = false): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const text = MONEY.format(value);
  return signed && value > 0 ? `+${text}` : text;
}

/** The 95% interval of a difference of two sums of prices. */
export function formatMoneyInterval(interval: readonly [number, number] | null | undefined): string {
  if (!interval) return '–';
  return `[${formatMoney(interval[0], true)}, ${formatMoney(interval[1], true)}]`;
}

/** A fraction (0.1234) as a percentage ("12.34%"); `signed` puts "+" before a positive value. */
export function formatPercent(fraction: number | null | undefined, digits = 2, signed = false): string {
  if (fraction === null || fraction === undefined || !Number.isFinite(fraction)) return '–';
  const text = `${(fraction * 100).toFixed(digits)}%`;
  return signed && fraction > 0 ? `+${text}` : text;
}

export function formatPValue(pValue: number | null | undefined): string {
  if (pValue === null || pValue === undefined || !Number.isFinite(pValue)) return '–';
  return pValue < 0.0001 ? '< 0.0001' : pValue.toFixed(4);
}

/** The 95% interval of a difference of two rates, in percentage points of CTR. */
export function formatInterval(interval: readonly [number, number] | null | undefined): string {
  if (!interval) return '–';
  return `[${formatPercent(interval[0], 2, true)}, ${formatPercent(interval[1], 2, true)}]`;
}

/** What the p-value of a variant against the first one means, in plain words. */
export function verdict(pValue: number | null | undefined): string {
  if (pValue === null || pValue === undefined || !Number.isFinite(pValue)) return 'not enough data yet';
  return pValue < 0.05 ? 'significant at 95%' : 'not significant yet';
}

// ---------------------------------------------------------------------------------------------- dates

export interface DateRange {
  /** First day, inclusive, `YYYY-MM-DD` (UTC). */
  from: string;
  /** Last day, inclusive, `YYYY-MM-DD` (UTC). */
  to: string;
}

const DAY_MS = 86_400_000;

export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The last `days` days up to and including today (UTC). */
export function defaultRange(now: Date = new Date(), days = 30): DateRange {
  return { from: utcDay(new Date(now.getTime() - (days - 1) * DAY_MS)), to: utcDay(now) };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A range as typed in the form: both days valid and in order, else the reason it is not. */
export function checkRange(range: DateRange): string | undefined {
  if (!DAY.test(range.from) || Number.isNaN(Date.parse(range.from))) return 'the start date is not a date';
  if (!DAY.test(range.to) || Number.isNaN(Date.parse(range.to))) return 'the end date is not a date';
  if (range.from > range.to) return 'the start date is after the end date';
  return undefined;
}

/** A path with its query; undefined values are left out. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

// ---------------------------------------------------------------------------------------- credentials

/** A JWT: three dot-separated base64url parts (the signature may be empty only for unsigned tokens). */
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJwt(credential: string): boolean {
  return JWT.test(credential);
}

export interface Credentials {
  tenantId: string;
  /** An API key, or a bearer token (JWT). */
  secret: string;
}

/** The headers every request of the dashboard carries. */
export function authHeaders(credentials: Credentials): Record<string, string> {
  const secret = credentials.secret.trim();
  return looksLikeJwt(secret)
    ? { 'X-Tenant-Id': credentials.tenantId.trim(), Authorization: `Bearer ${secret}` }
    : { 'X-Tenant-Id': credentials.tenantId.trim(), 'X-Api-Key': secret };
}

// ------------------------------------------------------------------------------------------- errors

/** The project's error body (`{ statusCode, code, error, message }`), or whatever else the server said. */
export interface ErrorAnswer {
  status: number;
  code?: string;
  message?: string;
}

/** An error answer as a sentence for the page. */
export function describeError(answer: ErrorAnswer): string {
  const detail = answer.message ? ` (${answer.code ? `${answer.code}: ` : ''}${answer.message})` : '';
  switch (answer.status) {
    case 0:
      return 'The server could not be reached.';
    case 401:
      return `The credentials were refused${detail}.`;
    case 403:
      return `These credentials may not read this${detail}.`;
    case 404:
      return `Not available on this server${detail}.`;
    case 429:
      return `Too many requests: try again in a minute${detail}.`;
  }
  if (answer.status >= 200 && answer.status < 300) return `The answer could not be read${detail}.`;
  if (answer.status >= 500) return `The server failed (HTTP ${answer.status})${detail}.`;
  return `The request was refused (HTTP ${answer.status})${detail}.`;
}

/** Reads the error body of an answer that may not be JSON at all. */
export function parseErrorBody(status: number, text: string): ErrorAnswer {
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    return {
      status,
      code: typeof body.code === 'string' ? body.code : undefined,
      message: typeof body.message === 'string' ? body.message : undefined,
    };
  } catch {
    return { status };
  }
}

// --------------------------------------------------------------------------------------- data shapes

export function total<T>(rows: readonly T[], value: (row: T) => number): number {
  return rows.reduce((sum, row) => sum + value(row), 0);
}

export interface FunnelStep {
  label: string;
  count: number;
  /** Share of the first step (impressions), 0..1; 0 when nothing was shown. */
  share: number;
}

/** A scenario's summary as the steps of a funnel, each with its share of the impressions. */
export function funnelSteps(summary: ScenarioSummary): FunnelStep[] {
  const steps: [string, number][] = [
    ['Impressions', summary.impressions],
    ['Clicks', summary.clicks],
    ['Carts', summary.carts],
    ['Purchases', summary.purchases],
  ];
  const base = summary.impressions;
  return steps.map(([label, count]) => ({ label, count, share: base > 0 ? count / base : 0 }));
}

/** Series of a chart by name, over the rows' labels: the shape chart libraries take. */
export interface Series {
  labels: string[];
  datasets: { label: string; data: number[] }[];
}

export function toSeries<T extends { date: string }>(
  rows: readonly T[],
  fields: readonly { key: keyof T & string; label: string }[],
): Series {
  return {
    labels: rows.map((row) => row.date),
    datasets: fields.map(({ key, label }) => ({ label, data: rows.map((row) => Number(row[key]) || 0) })),
  };
}
