import { z } from 'zod';

export const SLUG = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/,
    'a slug is 1-128 letters, digits, _, . or -, starting with a letter or digit',
  );

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

/** ISO 8601 date or date-time; a time without offset is UTC. Returns epoch ms, NaN when invalid. */
export function parseIsoTimestamp(value: string): number {
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
