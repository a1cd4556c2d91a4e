import { textHash } from '../vector/text-hash.js';
import type { RecommendationRequest, SearchPart } from './request.js';

/**
 * A request as a page of answers keeps it (engine/recomm-pages.ts): two JSON texts, each field under its
 * index in FIELDS (fewer characters than its name; JSON keeps `null`, a user without a document or a
 * filter turned off, apart from a field left out). `shape` holds the fields that many requests share
 * (their logic or scenario, count, overrides, projection, ...), `own` the seeds, the search and the
 * user's document. `exclude` and `rotated` are kept as arrays, and so is search's vector.
 */
export interface RequestTexts {
  shape: string;
  own: string;
}

const FIELDS = [
  'scenario',
  'logicType',
  'userId',
  'itemId',
  'itemIds',
  'count',
  'country',
  'noCache',
  'overrides',
  'projection',
  'search',
  'rotationRate',
  'rotationTime',
  'userContext',
] as const satisfies readonly (keyof RecommendationRequest)[];
type Field = (typeof FIELDS)[number];
type ArrayField = 'exclude' | 'rotated';
/** Fails to compile when a request gains a field this file does not keep. */
const EVERY_FIELD_KEPT: Record<Exclude<keyof RecommendationRequest, Field | ArrayField>, never> = {};
void EVERY_FIELD_KEPT;

const OWN: ReadonlySet<Field> = new Set<Field>(['userId', 'itemId', 'itemIds', 'search', 'userContext']);

/**
 * The fields of `request` that are `own` (or not), as a JSON object under their indexes: written as text
 * field by field, which takes about half the time of stringifying an object built for it (pages keep one
 * per answer given).
 */
function fieldsJson(request: RecommendationRequest, own: boolean): string {
  let text = '{';
  for (let i = 0; i < FIELDS.length; i++) {
    const name = FIELDS[i];
    if (OWN.has(name) !== own) continue;
    const value =
      name === 'search' && request.search
        ? Object.assign({}, request.search, { vector: undefined } satisfies Partial<SearchPart>)
        : request[name];
    // Left out as JSON.stringify leaves out an undefined property.
    const json = value === undefined ? undefined : JSON.stringify(value);
    if (json === undefined) continue;
    text += `${text.length > 1 ? ',' : ''}"${i}":${json}`;
  }
  return `${text}}`;
}

export function requestTexts(request: RecommendationRequest): RequestTexts {
  return { shape: fieldsJson(request, false), own: fieldsJson(request, true) };
}

/** The request of `requestTexts`, without its arrays. */
export function requestOf(texts: RequestTexts): RecommendationRequest {
  const request: Record<string, unknown> = {};
  for (const text of [texts.shape, texts.own]) {
    const fields = JSON.parse(text) as Record<number, unknown>;
    for (const [index, value] of Object.entries(fields)) request[FIELDS[Number(index)]] = value;
  }
  return request as unknown as RecommendationRequest;
}

/** The userId of an `own` text. */
export function userIdOf(own: string): string | undefined {
  return (JSON.parse(own) as Record<number, string | undefined>)[FIELDS.indexOf('userId')];
}

/** `textHash` of a text as a signed word, as the pages keep it (0 for none). */
export function hashText(text: string | undefined): number {
  return text === undefined ? 0 : textHash(text) | 0;
}
