import { MAX_BATCH, parseIsoTimestamp } from './common.js';
import { z } from 'zod';
import { INTERACTION, INTERACTION_TYPES, REVENUE_TYPES, type Interaction } from './ingestion.js';

/**
 * A hand-written check of the interactions body, the hottest body the daemon validates. INTERACTIONS_BODY
 * (zod) stays the definition: this accepts only bodies the schema accepts, and answers what the schema
 * would make of them. Anything it is not sure of (a bad field, a field of a kind JSON never sends) makes
 * it give up, and the schema then decides and words the error, so that error bodies cannot differ.
 */

const TYPES: ReadonlySet<unknown> = new Set(INTERACTION_TYPES);

/** A string field's bounds (in UTF-16 units, as zod counts them) and whether it may be null. */
interface StringRule {
  min: number;
  max: number;
  nullable: boolean;
}

/** The bare schema inside optional and nullable wrappers. */
function unwrapped(schema: z.ZodType): z.ZodType {
  let inner = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable)
    inner = inner.unwrap() as z.ZodType;
  return inner;
}

/** The rules of INTERACTION's string fields, read from the schema itself so that they cannot drift. */
const STRING_RULES: Readonly<Record<string, StringRule>> = Object.fromEntries(
  Object.entries(INTERACTION.shape).flatMap(([key, field]) => {
    const inner = unwrapped(field);
    if (!(inner instanceof z.ZodString)) return [];
    const rule = {
      min: inner.minLength ?? 0,
      max: inner.maxLength ?? Infinity,
      nullable: field.safeParse(null).success,
    };
    return [[key, rule]];
  }),
);

/** The rules of the fields most events carry, looked up once rather than by key for each event. */
const ITEM_ID = STRING_RULES.itemId;
const USER_ID = STRING_RULES.userId;
const SESSION_ID = STRING_RULES.sessionId;
const COUNTRY = STRING_RULES.country;
const SCENARIO_SLUG = STRING_RULES.scenarioSlug;

function passesRule(value: unknown, rule: StringRule): boolean {
  if (value === null) return rule.nullable;
  return typeof value === 'string' && value.length >= rule.min && value.length <= rule.max;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks one event without changing it; returns its timestamp in epoch ms, undefined when it has none,
 * or NaN when the schema must decide.
 */
function checkEvent(event: unknown): number | undefined {
  if (!isRecord(event)) return NaN;
  let timestamp: number | undefined;
  let hasItem = false;
  let hasType = false;
  let hasIdentity = false;
  let hasRevenue = false;
  for (const key in event) {
    const value = event[key];
    switch (key) {
      case 'type':
        if (!TYPES.has(value)) return NaN;
        hasType = true;
        break;
      case 'weight':
        if (typeof value !== 'number' || !Number.isFinite(value)) return NaN;
        break;
      case 'amount':
      case 'price':
      case 'profit':
        if (typeof value !== 'number' || !Number.isFinite(value)) return NaN;
        if (key === 'amount' ? value <= 0 : key === 'price' && value < 0) return NaN;
        hasRevenue = true;
        break;
      case 'timestamp':
        if (typeof value !== 'string') return NaN;
        timestamp = parseIsoTimestamp(value);
        if (Number.isNaN(timestamp)) return NaN;
        break;
      case 'itemId':
        if (!passesRule(value, ITEM_ID)) return NaN;
        hasItem = true;
        break;
      case 'userId':
      case 'sessionId':
        if (!passesRule(value, key === 'userId' ? USER_ID : SESSION_ID)) return NaN;
        hasIdentity = true;
        break;
      case 'country':
        if (!passesRule(value, COUNTRY)) return NaN;
        break;
      case 'scenarioSlug':
        if (!passesRule(value, SCENARIO_SLUG)) return NaN;
        break;
      default: {
        const rule = Object.hasOwn(STRING_RULES, key) ? STRING_RULES[key] : undefined;
        if (rule === undefined || !passesRule(value, rule)) return NaN;
      }
    }
  }
  if (hasRevenue && !REVENUE_TYPES.has(event.type)) return NaN;
  return hasItem && hasType && hasIdentity ? timestamp : NaN;
}

/**
 * The interactions of a body INTERACTIONS_BODY accepts, as it would return them (timestamps as epoch ms),
 * or undefined when the schema must decide. The events of an accepted body are the parsed ones, changed
 * in place only once all of them passed (the schema must see a refused body as it came).
 */
export function checkInteractionsBody(body: unknown): { interactions: Interaction[] } | undefined {
  if (!isRecord(body)) return undefined;
  for (const key in body) if (key !== 'interactions') return undefined;
  const events = body.interactions;
  if (!Array.isArray(events) || events.length > MAX_BATCH) return undefined;
  let timestamps: (number | undefined)[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const timestamp = checkEvent(events[i]);
    if (timestamp === undefined) continue;
    if (Number.isNaN(timestamp)) return undefined;
    (timestamps ??= [])[i] = timestamp;
  }
  if (timestamps) {
    for (let i = 0; i < timestamps.length; i++) {
      if (timestamps[i] !== undefined) (events[i] as Record<string, unknown>).timestamp = timestamps[i];
    }
  }
  return body as { interactions: Interaction[] };
}
