import { Cron } from 'croner';
import { z } from 'zod';
import { pathProblem } from './json-path.js';
import { SLUG } from './common.js';

/** Catalog feeds (CONTRACT.md, "Feeds"; docs/guide.md, "Catalog feeds"). */

export const FEED_STATES = ['draft', 'previewed', 'active', 'syncing', 'disabled'] as const;
export type FeedState = (typeof FEED_STATES)[number];

export const MAPPING_DATA_TYPES = ['string', 'double', 'int', 'image', 'enum'] as const;
export type MappingDataType = (typeof MAPPING_DATA_TYPES)[number];

/** Targets stored under a fixed attribute name; `category` is the item's top-level category. */
export const SEMANTIC_ATTRIBUTES: Readonly<Record<string, string>> = {
  name: 'name',
  basePrice: 'price',
  coverImage: 'image',
};

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_PAGE_SIZE = 100;

/** Names that would reach an object's prototype rather than a property of its own. */
const UNSAFE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

const NAME = z
  .string()
  .min(1)
  .max(128)
  .refine((name) => !UNSAFE_NAMES.has(name), 'this name is reserved');

const JSON_PATH = z
  .string()
  .min(1)
  .max(512)
  .superRefine((path, context) => {
    const problem = pathProblem(path);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });

const HTTP_URL = z
  .string()
  .max(4096)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'expected an absolute http or https URL');

/** Query parameter names: sent as they are. */
const PARAM = z.string().min(1).max(128);

export const PAGINATION = z
  .strictObject({
    mode: z.enum(['none', 'cursor', 'limit_offset']).default('none'),
    /** cursor: the query parameter the next page's cursor is sent in. */
    cursorParam: PARAM.default('cursor'),
    /** cursor: where the next cursor is in a response (JSONPath on the response). */
    cursorPath: JSON_PATH.optional(),
    /** limit_offset: records per page (also sent as `limitParam` in cursor mode when set). */
    pageSize: z.number().int().min(1).max(10_000).optional(),
    limitParam: PARAM.default('limit'),
    offsetParam: PARAM.default('offset'),
  })
  .superRefine((pagination, context) => {
    if (pagination.mode === 'cursor' && pagination.cursorPath === undefined) {
      context.addIssue({
        code: 'custom',
        message: 'cursor pagination needs cursorPath',
        path: ['cursorPath'],
      });
    }
  });
export type Pagination = z.infer<typeof PAGINATION>;

export const MAPPING_RULE = z.strictObject({
  property: NAME,
  path: JSON_PATH,
  dataType: z.enum(MAPPING_DATA_TYPES),
  /** name, basePrice, coverImage, category, attributes, or any other name (stored as attributes.<property>). */
  target: NAME.default('attributes'),
  facetable: z.boolean().optional(),
});
export type MappingRule = z.infer<typeof MAPPING_RULE>;

/** Where a rule's value goes: `category`, or the attribute it sets. */
export function destinationOf(rule: Pick<MappingRule, 'property' | 'target'>): string {
  if (rule.target === 'category') return 'category';
  return `attributes.${SEMANTIC_ATTRIBUTES[rule.target] ?? rule.property}`;
}

function cronProblem(expression: string): string | undefined {
  try {
    new Cron(expression, { paused: true, timezone: 'Etc/UTC' }).stop();
    return undefined;
  } catch (error) {
    return `not a cron expression: ${(error as Error).message}`;
  }
}

/**
 * Where a feed reads its items (CONTRACT.md, "Integrator features", **Feed formats.**): `api` and
 * `json_url` answer JSON, paged; `google_merchant` (RSS 2.0 or Atom with Google's `g:` namespace), `csv`
 * and `tsv` are one document each, read as a stream (docs/guide.md, "Feed formats").
 */
export const SOURCE_TYPES = ['api', 'json_url', 'google_merchant', 'csv', 'tsv'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** The source types read as one streamed document: `itemsPath` and `pagination` do not apply to them. */
export const DOCUMENT_SOURCE_TYPES: ReadonlySet<SourceType> = new Set(['google_merchant', 'csv', 'tsv']);

/** What a client sends: the configuration of a feed (POST creates it, PUT replaces it). */
const FEED_FIELDS = {
  id: SLUG.optional(),
  name: z.string().max(256).optional(),
  sourceType: z
    .enum(SOURCE_TYPES)
    .describe(
      'api or json_url: JSON, paged; google_merchant: an RSS 2.0 or Atom feed with the g: namespace; ' +
        'csv or tsv: a header row, then one item a row. The last three are one document (no itemsPath, ' +
        'no pagination); gzip bodies are decompressed.',
    ),
  url: HTTP_URL,
  method: z.enum(['GET', 'POST', 'PUT']).default('GET'),
  headers: z.record(z.string().min(1).max(256), z.string().max(8192)).default({}),
  /** api sources with method POST or PUT: a JSON body sent with every page's request. */
  body: z.unknown().optional(),
  itemsPath: JSON_PATH.default('$'),
  itemIdPath: JSON_PATH,
  pagination: PAGINATION.default({
    mode: 'none',
    cursorParam: 'cursor',
    limitParam: 'limit',
    offsetParam: 'offset',
  }),
  mappingRules: z.array(MAPPING_RULE).max(200).default([]),
  scheduleMode: z.enum(['manual', 'interval', 'cron']).default('manual'),
  /** interval: minutes between the end of a sync and the start of the next. */
  intervalMinutes: z.number().int().min(1).max(525_600).optional(),
  /** cron: when syncs start, in UTC (5 fields, or 6 with seconds first). */
  cron: z.string().min(1).max(256).optional(),
  /** Each request's limit, from sending it to the last byte of the answer. */
  timeoutMs: z.number().int().min(100).max(600_000).default(DEFAULT_TIMEOUT_MS),
  /** Each response's limit in bytes. */
  maxBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .default(DEFAULT_MAX_BYTES),
};

/** Fields the daemon keeps; a body may carry them back (a GET's answer PUT again) and they are ignored. */
export const FEED_SYSTEM_FIELDS = ['state', 'createdAt', 'updatedAt', 'lastSync', 'syncProgress'] as const;

export const FEED_BODY = z.preprocess(
  (body) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
    const copy: Record<string, unknown> = { ...body };
    for (const field of FEED_SYSTEM_FIELDS) delete copy[field];
    return copy;
  },
  z.strictObject(FEED_FIELDS).superRefine((feed, context) => {
    if (feed.sourceType !== 'api' && feed.method !== 'GET') {
      const message = `a ${feed.sourceType} source is read with GET`;
      context.addIssue({ code: 'custom', message, path: ['method'] });
    }
    if (feed.body !== undefined && feed.method === 'GET') {
      context.addIssue({ code: 'custom', message: 'a GET request sends no body', path: ['body'] });
    }
    if (feed.scheduleMode === 'interval' && feed.intervalMinutes === undefined) {
      context.addIssue({
        code: 'custom',
        message: 'an interval schedule needs intervalMinutes',
        path: ['intervalMinutes'],
      });
    }
    if (feed.scheduleMode === 'cron') {
      const problem = feed.cron === undefined ? 'a cron schedule needs cron' : cronProblem(feed.cron);
      if (problem) context.addIssue({ code: 'custom', message: problem, path: ['cron'] });
    } else if (feed.cron !== undefined) {
      const problem = cronProblem(feed.cron);
      if (problem) context.addIssue({ code: 'custom', message: problem, path: ['cron'] });
    }
    const destinations = new Map<string, number>();
    feed.mappingRules.forEach((rule, index) => {
      const destination = destinationOf(rule);
      const first = destinations.get(destination);
      if (first !== undefined) {
        context.addIssue({
          code: 'custom',
          message: `rules ${first} and ${index} both set ${destination}`,
          path: ['mappingRules', index, 'target'],
        });
      } else destinations.set(destination, index);
    });
  }),
);
export type FeedBody = z.infer<typeof FEED_BODY>;
export type FeedConfig = Omit<FeedBody, 'id'> & { id: string };

export interface RecordError {
  /** The record's place in the whole source, from 0. */
  index: number;
  message: string;
}

/** `POST /catalog/feeds/:id/sync`'s answer. */
export interface SyncResult {
  upserted: number;
  markedUnavailable: number;
  /** The first per-record mapping errors (at most MAX_REPORTED_ERRORS). */
  errors: RecordError[];
  startedAt: string;
  finishedAt: string;
}

export const MAX_REPORTED_ERRORS = 100;

/** The outcome of a feed's last sync, kept on the feed. */
export type LastSync =
  | (SyncResult & { status: 'succeeded' })
  | { status: 'failed'; message: string; startedAt: string; finishedAt: string };

/** A stored feed: its configuration and what the daemon keeps about it. */
export type Feed = FeedConfig & {
  state: FeedState;
  createdAt: string;
  updatedAt: string;
  lastSync: LastSync | null;
};

/** A record mapped to an item as a sync would store it. */
export interface MappedItem {
  externalId: string;
  /** Present when a rule targets the category; null when the record has none. */
  category?: string | null;
  /** The attributes the rules set; null: the record has no value, and the attribute is removed. */
  attributes: Record<string, unknown>;
}

/** `POST /catalog/feeds/:id/preview`'s answer. */
export interface PreviewResult {
  items: MappedItem[];
  total: number;
  errors: RecordError[];
}

export const PREVIEW_ITEMS = 20;

export const FEED_ID_PARAMS = z.strictObject({ id: z.string().min(1).max(128) });
