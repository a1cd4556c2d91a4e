import { z } from 'zod';
import { expression } from './expressions.js';
import { LOGIC_TYPES, ROTATION_RATE, ROTATION_TIME, SLUG } from './scenarios.js';

const ID = z.string().min(1).max(512);
const COUNT = z.number().int().min(1).max(1000);
const PATH = z
  .string()
  .min(1)
  .max(512)
  .refine((path) => !path.split('.').includes(''), 'a path has no empty segment');
const PATHS = z.array(PATH).max(1000);
/** Any text: a country that is not an ISO 3166-1 alpha-2 code ranks globally rather than failing. */
const COUNTRY = z.string();

/** Request-time overrides: an omitted field keeps the scenario's value; null (or empty) clears it. */
const OVERRIDES = {
  filter: z
    .union([expression('filter'), z.literal('')])
    .nullable()
    .optional(),
  boosters: z.array(expression('booster')).max(100).nullable().optional(),
  rulesSlugs: z.array(z.string().max(128)).max(100).nullable().optional(),
  segmentationId: z.string().max(128).nullable().optional(),
  itemsPerSegment: z.number().int().min(1).nullable().optional(),
  autoRelaxFilters: z.boolean().optional(),
  relaxEntireFilterOnEmpty: z.boolean().optional(),
};

export const OVERRIDE_FIELDS = Object.keys(OVERRIDES) as (keyof typeof OVERRIDES)[];

/** Rotation of user-to-item (docs/guide.md, "Rotation"): a rate in 0..1 (0: off), a window in seconds. */
const ROTATION = { rotationRate: ROTATION_RATE.optional(), rotationTime: ROTATION_TIME.optional() };

/** What both POST bodies share: the items seeds, count, country, projection, cache switch and overrides. */
const LIST_FIELDS = {
  itemIds: z.array(ID).max(1000).optional(),
  count: COUNT.optional(),
  country: COUNTRY.optional(),
  returnProperties: z.boolean().optional(),
  includedProperties: PATHS.optional(),
  noCache: z.boolean().optional(),
  ...OVERRIDES,
};

export const RECOMMENDATION_BODY = z.strictObject({
  scenario: SLUG.optional(),
  logicType: z.enum(LOGIC_TYPES).optional(),
  userId: ID.optional(),
  itemId: ID.optional(),
  ...LIST_FIELDS,
  ...ROTATION,
});
export type RecommendationBody = z.infer<typeof RECOMMENDATION_BODY>;

/** Body of the legacy `POST /recommendations/items-to-items` (scenario and userId travel in the query). */
export const ITEMS_TO_ITEMS_BODY = z.strictObject(LIST_FIELDS);
export type ItemsToItemsBody = z.infer<typeof ITEMS_TO_ITEMS_BODY>;

const BOOLEAN_TEXT = z.enum(['true', 'false']).transform((value) => value === 'true');
const NULLABLE_TEXT = z
  .string()
  .max(10_000)
  .transform((value) => (value === '' || value === 'null' ? null : value));

/**
 * Splits a comma-separated list at the commas that are not inside quotes, braces or parentheses, so
 * that boosters such as `boost by 2 where 'c' in {"a", "b"}` survive the query-string form.
 */
export function splitTopLevelCommas(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (quote) {
      if (char === '\\') i++;
      else if (char === quote) quote = null;
    } else if (char === '"' || char === "'") quote = char;
    else if (char === '{' || char === '(') depth++;
    else if (char === '}' || char === ')') depth--;
    else if (char === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((part) => part.length > 0);
}

/** A number as text: empty text is no number (z.coerce would read it as 0). */
const NUMBER_TEXT = z
  .string()
  .max(64)
  .transform((text, context) => {
    const value = text.trim() === '' ? NaN : Number(text);
    if (Number.isNaN(value)) context.addIssue({ code: 'custom', message: 'expected a number' });
    return value;
  });

const LIST_TEXT = z.string().max(20_000).transform(splitTopLevelCommas);

/** Query parameters of the legacy routes: the same fields, as text. */
export const LEGACY_QUERY = z.strictObject({
  scenario: SLUG.optional(),
  userId: ID.optional(),
  count: z.coerce.number().int().min(1).max(1000).optional(),
  country: COUNTRY.optional(),
  returnProperties: BOOLEAN_TEXT.optional(),
  includedProperties: z.string().max(4096).optional(),
  noCache: BOOLEAN_TEXT.optional(),
  filter: NULLABLE_TEXT.pipe(z.union([expression('filter'), z.null()])).optional(),
  boosters: LIST_TEXT.pipe(z.array(expression('booster')).max(100)).optional(),
  rulesSlugs: LIST_TEXT.optional(),
  segmentationId: NULLABLE_TEXT.optional(),
  itemsPerSegment: z
    .union([
      z.literal('').transform(() => null),
      z.literal('null').transform(() => null),
      z.coerce.number().int().min(1),
    ])
    .optional(),
  autoRelaxFilters: BOOLEAN_TEXT.optional(),
  relaxEntireFilterOnEmpty: BOOLEAN_TEXT.optional(),
  rotationRate: NUMBER_TEXT.pipe(ROTATION_RATE).optional(),
  rotationTime: NUMBER_TEXT.pipe(ROTATION_TIME).optional(),
});
export type LegacyQuery = z.infer<typeof LEGACY_QUERY>;

export const ALGORITHM_PARAMS = z.strictObject({ logicType: z.enum(LOGIC_TYPES) });
