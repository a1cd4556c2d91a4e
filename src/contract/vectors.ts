import { z } from 'zod';
import { SLUG } from './common.js';

/** How the vectors of an HNSW index are stored: smaller is faster and a little less exact. */
export const QUANTIZATIONS = ['f32', 'f16', 'i8'] as const;
export type Quantization = (typeof QUANTIZATIONS)[number];

const EF = z.number().int().min(1).max(4096);
const THRESHOLD = z.number().min(0).max(1);
const QUANTIZATION = z.enum(QUANTIZATIONS);

/**
 * An embedding template (spec "Embedding template"): the text an item is embedded from. Placeholders are
 * `{name}`, `{category}`, `{description}` and any attribute key (`{brand}`, `{size.eu}`).
 */
export const EMBEDDING_TEMPLATE = z.strictObject({
  slug: SLUG,
  name: z.string().max(256).optional(),
  template: z.string().min(1).max(4096),
  isDefault: z.boolean().default(false),
  appliesTo: z.array(z.string().min(1).max(256)).max(1000).default([]),
});
export type EmbeddingTemplate = z.infer<typeof EMBEDDING_TEMPLATE>;

/** `PUT /catalog/vector-defaults` (CONTRACT.md): the tenant's vector search settings. */
export const VECTOR_DEFAULTS = z.strictObject({
  hnsw_ef: EF.optional(),
  score_threshold: THRESHOLD.optional(),
  quantization: QUANTIZATION.optional(),
});
export type VectorDefaults = z.infer<typeof VECTOR_DEFAULTS>;

/**
 * A scenario's `vectorSettings`, over the tenant's vector defaults. `quantization_type` is another name for
 * `quantization`; further `quantization_*` keys are kept as sent.
 */
export const VECTOR_SETTINGS = z.looseObject({
  hnsw_ef: EF.optional(),
  score_threshold: THRESHOLD.optional(),
  filter_categories: z.array(z.string().min(1).max(256)).max(1000).optional(),
  quantization: QUANTIZATION.optional(),
  quantization_type: QUANTIZATION.optional(),
});
export type VectorSettings = z.infer<typeof VECTOR_SETTINGS>;

/** A scenario's `hybridSettings`, for multi-seed-hybrid; further keys are kept as sent. */
export const HYBRID_SETTINGS = z.looseObject({
  strategy: z.enum(['rrf', 'weighted']).optional(),
  rrfK: z.number().int().min(1).max(10_000).optional(),
  coTopK: z.number().int().min(0).max(1000).optional(),
  vectorTopK: z.number().int().min(0).max(1000).optional(),
  categoryBoost: z.number().min(0).max(10).optional(),
  /** For the `weighted` strategy: the co-occurrence share of a score (the vector share is the rest). */
  coWeight: z.number().min(0).max(1).optional(),
});
export type HybridSettings = z.infer<typeof HYBRID_SETTINGS>;

/** multi-seed-hybrid's settings when neither the scenario nor the request says (docs/guide.md, "Vectors and search"). */
export const HYBRID_DEFAULTS = Object.freeze({
  strategy: 'rrf' as const,
  rrfK: 60,
  coTopK: 100,
  vectorTopK: 100,
  categoryBoost: 0.1,
  coWeight: 0.5,
});

/** Vector search settings when neither the scenario nor the tenant's defaults say. */
export const VECTOR_SEARCH_DEFAULTS = Object.freeze({
  hnsw_ef: 64,
  score_threshold: 0,
  quantization: 'f32' as Quantization,
});

/** `GET /recommendations/search` query parameters. */
export const SEARCH_QUERY = z.strictObject({
  query: z.string().max(1000).optional(),
  count: z.coerce.number().int().min(1).max(1000).default(10),
  scenario: SLUG.optional(),
  userId: z.string().min(1).max(512).optional(),
  country: z.string().min(1).max(64).optional(),
  returnProperties: z.enum(['true', 'false']).optional(),
  includedProperties: z.string().max(2048).optional(),
  noCache: z.enum(['true', 'false']).optional(),
});
export type SearchQuery = z.infer<typeof SEARCH_QUERY>;

/** `POST /index` of the embeddings helper service (spec "Embeddings helper service"). */
export const INDEX_BODY = z.strictObject({
  tenantId: z.string().min(1).max(64),
  items: z
    .array(
      z.looseObject({
        externalId: z.string().min(1).max(512),
        category: z.string().max(512).nullable().optional(),
        attributes: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .max(10_000),
});
export type IndexBody = z.infer<typeof INDEX_BODY>;

/** The words of a text as search synonyms match them: runs of letters and digits, lower-cased. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

const SYNONYM_TEXT = z
  .string()
  .trim()
  .min(1)
  .max(256)
  .refine((text) => /[\p{L}\p{N}]/u.test(text), 'must hold a letter or a digit');

/**
 * `POST /search/synonyms` (CONTRACT.md, "Integrator features"): a search query's words are expanded with
 * the synonym (and the synonym with the term, unless `oneWay`).
 */
export const SEARCH_SYNONYM_BODY = z
  .strictObject({ term: SYNONYM_TEXT, synonym: SYNONYM_TEXT, oneWay: z.boolean().default(false) })
  .refine((pair) => wordsOf(pair.term).join(' ') !== wordsOf(pair.synonym).join(' '), {
    message: 'a term is not a synonym of itself',
    path: ['synonym'],
  });
export type SearchSynonymBody = z.infer<typeof SEARCH_SYNONYM_BODY>;

/** A stored synonym: its body and the id `POST` gave it. */
export const SEARCH_SYNONYM = z.strictObject({
  id: z.string().min(1).max(64),
  term: SYNONYM_TEXT,
  synonym: SYNONYM_TEXT,
  oneWay: z.boolean(),
});
export type SearchSynonym = z.infer<typeof SEARCH_SYNONYM>;
