import { z } from 'zod';

export const SLUG = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/,
    'a slug is 1-128 letters, digits, _, . or -, starting with a letter or digit',
  );

/**
 * A UTF-16 surrogate that is not half of a pair (a regular expression in `u` mode reads a pair as one
 * character): a string holding one is not valid Unicode, and no UTF-8 text, DuckDB string or JSON column
 * can hold it (docs/errors.md).
 */
export const LONE_SURROGATE = /\p{Surrogate}/u;

/** Largest number of records one ingestion request may carry (413 BATCH_TOO_LARGE above it). */
export const MAX_BATCH = 10_000;

export const TENANT_ID = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/,
    'a tenant id is 1-64 letters, digits, _ or -, starting with a letter or digit',
  );

const ISO_TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** The form clients send most (`toISOString()`), which Date.parse reads exactly as RFC 3339 says. */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;

/** The digit at `at` of `value` (0 to 9), or -1 when there is none. */
function digitAt(value: string, at: number): number {
  const digit = value.charCodeAt(at) - 48;
  return digit >= 0 && digit <= 9 ? digit : -1;
}

/** The number written by the `count` digits of `value` from `at`, or -1 when one is not a digit. */
function digitsAt(value: string, at: number, count: number): number {
  let number = 0;
  for (let i = at; i < at + count; i++) {
    const digit = digitAt(value, i);
    if (digit < 0) return -1;
    number = number * 10 + digit;
  }
  return number;
}

/**
 * The canonical form read without a regular expression or Date.parse, each of which costs several times
 * the whole of this (bench/ingest sends a timestamp with every event). Undefined when it is not sure:
 * another form, or a field Date.parse treats its own way (a day past the 28th rolls into the next month,
 * 24:00 is the next day's start, a year below 100), which the general path then reads.
 */
function canonicalUtc(value: string): number | undefined {
  const length = value.length;
  if (length !== 20 && (length < 22 || length > 24)) return undefined;
  if (value[4] !== '-' || value[7] !== '-' || value[10] !== 'T' || value[13] !== ':' || value[16] !== ':')
    return undefined;
  if (value[length - 1] !== 'Z' || (length > 20 && value[19] !== '.')) return undefined;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 2);
  const day = digitsAt(value, 8, 2);
  const hour = digitsAt(value, 11, 2);
  const minute = digitsAt(value, 14, 2);
  const second = digitsAt(value, 17, 2);
  // One to three digits of a second: .5 is 500 ms.
  const fraction = length > 20 ? digitsAt(value, 20, length - 21) * 10 ** (24 - length) : 0;
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > 28) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || fraction < 0)
    return undefined;
  return Date.UTC(year, month - 1, day, hour, minute, second, fraction);
}

/** ISO 8601 date or date-time; a time without offset is UTC. Returns epoch ms, NaN when invalid. */
export function parseIsoTimestamp(value: string): number {
  const canonical = canonicalUtc(value);
  if (canonical !== undefined) return canonical;
  if (CANONICAL_UTC.test(value)) return Date.parse(value);
  if (!ISO_TIMESTAMP.test(value)) return NaN;
  const hasTime = value.length > 10;
  const hasOffset = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value.slice(10));
  return Date.parse(hasTime && !hasOffset ? `${value}Z` : value);
}

/** An ISO 8601 date or date-time, parsed once during validation into epoch milliseconds. */
export const ISO_DATE_TIME = z.string().transform((value, context) => {
  const ms = parseIsoTimestamp(value);
  if (Number.isNaN(ms))
    context.addIssue({ code: 'custom', message: 'expected an ISO 8601 date or date-time' });
  return ms;
});

export const NON_EMPTY_ID = z.string().min(1, 'must not be empty').max(512, 'at most 512 characters');

export const PAGE_QUERY = z.strictObject({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(1000).default(50),
});
export type PageQuery = z.infer<typeof PAGE_QUERY>;
