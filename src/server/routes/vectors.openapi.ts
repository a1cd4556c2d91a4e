import { recommended, resource } from '../openapi/examples.js';
import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

const VECTOR_DEFAULTS_EXAMPLE = { hnsw_ef: 64, score_threshold: 0.2, quantization: 'i8' };
const SYNONYM_EXAMPLE = { id: 'pS1b7Rz0Qm3kX9aA', term: 'sofa', synonym: 'couch', oneWay: false };

/**
 * What the OpenAPI document says of the routes of vectors.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /recommendations/search': {
    id: 'search',
    tag: 'Search',
    summary: 'Search',
    description:
      'Hybrid search: price bounds and category names in `query` become a filter, the rest ranks by meaning; answers the items, facets and what the text was taken to mean.',
    body: R.SEARCH,
    errors: [404],
    answer: recommended('hybrid-search', {
      facets: {
        categories: [{ value: 'shoes', count: 12 }],
        priceRanges: [
          { value: 'under 50', count: 3 },
          { value: '50 to 100', count: 7 },
          { value: '100 and over', count: 2 },
        ],
      },
      query: {
        original: 'trail running shoes under 150',
        semanticText: 'trail running shoes',
        extractedFilters: `'category' in {"shoes"} and 'price' < 150`,
      },
    }),
  },
  ...resource(
    '/catalog/embedding-templates',
    'slug',
    'embedding template',
    'Search',
    'What vector search embeds for the categories it applies to (`{name} {category} {description}` by default).',
    { slug: 'shoes', template: '{brand} {name} {category} {material}', appliesTo: ['shoes'] },
    { isDefault: false },
  ),
  'POST /search/synonyms': {
    id: 'createSearchSynonym',
    tag: 'Search',
    summary: 'Create a search synonym',
    description:
      "Search expands a query's words with the synonym, and the synonym with the term unless `oneWay`. Answers 201 with the stored synonym and its `id`; 409 CONFLICT when the same pair exists.",
    status: 201,
    body: R.SEARCH_SYNONYM,
    errors: [409],
    example: { term: 'sofa', synonym: 'couch', oneWay: false },
    answer: SYNONYM_EXAMPLE,
  },
  'GET /search/synonyms': {
    id: 'listSearchSynonyms',
    tag: 'Search',
    summary: 'List the search synonyms',
    description: 'Every search synonym of the tenant, as `{ data: [...] }`.',
    body: R.SEARCH_SYNONYMS,
    answer: { data: [SYNONYM_EXAMPLE] },
  },
  'DELETE /search/synonyms/:id': {
    id: 'deleteSearchSynonym',
    tag: 'Search',
    summary: 'Delete a search synonym',
    description: 'Deletes the synonym; answers 204 without a body, 404 when there is none.',
    status: 204,
    body: null,
  },
  'GET /catalog/vector-defaults': {
    id: 'getVectorDefaults',
    tag: 'Search',
    summary: 'Get the vector defaults',
    description: "The tenant's vector search defaults (hnsw_ef, score_threshold, quantization).",
    body: R.VECTOR_DEFAULTS,
    answer: VECTOR_DEFAULTS_EXAMPLE,
  },
  'PUT /catalog/vector-defaults': {
    id: 'setVectorDefaults',
    tag: 'Search',
    summary: 'Set the vector defaults',
    description: 'hnsw_ef, score_threshold and quantization (f32, f16, i8) for the tenant.',
    body: R.VECTOR_DEFAULTS,
    example: VECTOR_DEFAULTS_EXAMPLE,
    answer: VECTOR_DEFAULTS_EXAMPLE,
  },
};
