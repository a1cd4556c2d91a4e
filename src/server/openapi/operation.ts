import type { z } from 'zod';

/**
 * What the OpenAPI document says of an operation beyond its schemas (docs/guide.md, "The HTTP API"). Each
 * module of routes has its operations' entries beside it, in an `openapi` export of a file of the same
 * name ending in `.openapi.ts` (src/server/routes/feeds.openapi.ts for routes/feeds.ts); document.ts
 * gathers them and builds the document from them, the routes' own schemas and their credentials.
 */
export interface OperationDoc {
  id: string;
  tag: Tag;
  summary: string;
  description: string;
  /** The success status (default 200) and its body; `null`: no body (204). */
  status?: number;
  body?: z.ZodType | null;
  /** The success body's media type when it is not JSON (its schema is then a string). */
  mediaType?: string;
  /** Error statuses beyond those every route of its kind may answer (see document.ts). */
  errors?: number[];
  /** An example request body, for the routes that take one. */
  example?: unknown;
  /** An example success body (every status but 204): realistic, and valid against its schema. */
  answer?: unknown;
}

export const TAGS = {
  Operations: 'Health, readiness, metrics and the lake export: for the operator and for probes.',
  Tenants: 'Tenants and their credentials and rate limits (operator key).',
  Ingestion: 'Items, users, interactions and impressions, written in batches.',
  Catalog: "The tenant's stored items and users, and its settings.",
  Feeds: 'Catalog feeds: pull items from a JSON source, preview, activate, sync and schedule.',
  Recommendations:
    'Ranked lists: user-to-item, item-to-item, items-to-items, similar products, recently viewed.',
  Search: 'Hybrid natural-language search, its synonyms, and what vector search embeds.',
  Configuration: 'Scenarios, rules and segmentations that shape the lists.',
  Experiments: 'A/B experiments over scenarios, and their results with significance.',
  Identity: 'Merging sessions into users, exporting and deleting a user.',
  Analytics: "Figures over a window of UTC days, computed from the tenant's events.",
  Auth: 'Bearer tokens (JWT) issued from the API key.',
} as const;

export type Tag = keyof typeof TAGS;

/** The entries of a module's operations, by `METHOD /path` as the route is registered. */
export type Operations = Record<string, OperationDoc>;
