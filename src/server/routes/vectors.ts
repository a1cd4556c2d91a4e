import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { LEGACY_QUERY, type LegacyQuery } from '../../contract/recommendations.js';
import { createHash } from 'node:crypto';
import {
  SEARCH_SYNONYM_BODY,
  VECTOR_DEFAULTS,
  wordsOf,
  type SearchSynonymBody,
  type VectorDefaults,
} from '../../contract/vectors.js';
import { embeddingTemplates, searchSynonyms } from '../../config/resources.js';
import { checkGetPaths, checkRequestTarget } from '../../engine/projection.js';
import { fromLegacyQuery, type RecommendationRequest } from '../../engine/request.js';
import { parseSearchQuery } from '../../engine/search-query.js';
import { expandSynonyms } from '../../engine/search-synonyms.js';
import { setVectorDefaults } from '../../config/vector-defaults.js';
import { batchExclusions } from '../batch-requests.js';
import { SCOPE } from '../plugins/auth.js';
import { recommenderFor } from '../warm-up-request.js';
import { CONFIG_ROUTE, keyOf, registerConfigResource } from './config-resource.js';

/** `GET /recommendations/search`: the legacy routes' parameters, and the text (CONTRACT.md, "Search"). */
const SEARCH_QUERY = LEGACY_QUERY.extend({ query: z.string().min(1).max(1000) });
type SearchQuery = LegacyQuery & { query: string };

export async function vectorRoutes(app: FastifyInstance): Promise<void> {
  // A template change re-embeds the tenant's items whose text it changes.
  registerConfigResource(app, '/catalog/embedding-templates', embeddingTemplates, 'slug', (tenant) =>
    app.runtime.vectors.tenantChanged(tenant),
  );

  app.get(
    '/catalog/vector-defaults',
    { config: CONFIG_ROUTE },
    async (request) => request.tenant.config.vectorSearchDefaults,
  );

  app.put(
    '/catalog/vector-defaults',
    { config: CONFIG_ROUTE, schema: { body: VECTOR_DEFAULTS } },
    async (request) => setVectorDefaults(app.runtime, request.tenant, request.body as VectorDefaults),
  );

  app.post(
    '/search/synonyms',
    { config: CONFIG_ROUTE, schema: { body: SEARCH_SYNONYM_BODY } },
    async (request, reply) => {
      const body = request.body as SearchSynonymBody;
      const synonym = { id: synonymId(body), ...body };
      return reply.code(201).send(await searchSynonyms.create(app.runtime, request.tenant, synonym));
    },
  );

  app.get('/search/synonyms', { config: CONFIG_ROUTE }, async (request) => ({
    data: searchSynonyms.list(request.tenant),
  }));

  app.delete('/search/synonyms/:id', { config: CONFIG_ROUTE }, async (request, reply) => {
    await searchSynonyms.remove(app.runtime, request.tenant, keyOf(request, 'id'));
    return reply.code(204).send();
  });

  app.get(
    '/recommendations/search',
    { config: { kinds: SCOPE.browser }, schema: { querystring: SEARCH_QUERY }, attachValidation: true },
    async (request, reply) => {
      checkRequestTarget(request.url);
      if (request.validationError) throw request.validationError;
      const query = request.query as SearchQuery;
      const { tenant } = request;
      const parsed = parseSearchQuery(query.query, tenant.catalog.categoryTable.all());
      const semanticText = expandSynonyms(parsed.semanticText, tenant.config);
      const recommendation = fromLegacyQuery('similar-products', {}, query);
      checkGetPaths(recommendation.projection);
      // The semantic text's vector is computed here, where the embedder is; ranking may run in another thread.
      const vector = semanticText.length > 0 ? await app.runtime.vectors.embedQuery(semanticText) : undefined;
      const search = {
        query: query.query,
        semanticText,
        filter: parsed.filter,
        vector: vector && vector.some((value) => value !== 0) ? vector : undefined,
      };
      const answer = await new Promise<string | Error>((resolve) =>
        recommenderFor(app, request).recommend(
          tenant,
          Object.assign({}, recommendation, {
            logicType: undefined,
            search,
            // A later list of a batch with distinctRecomms skips the items of its earlier ones.
            exclude: batchExclusions(request),
          } satisfies Partial<RecommendationRequest>),
          resolve,
        ),
      );
      if (answer instanceof Error) throw answer;
      return reply.type('application/json; charset=utf-8').send(answer);
    },
  );
}

/**
 * A synonym's id: the same for the same pair (a two-way pair either way round, case and punctuation
 * aside), so that sending one again is 409 `CONFLICT` rather than a second copy.
 */
function synonymId({ term, synonym, oneWay }: SearchSynonymBody): string {
  const sides = [wordsOf(term).join(' '), wordsOf(synonym).join(' ')];
  if (!oneWay) sides.sort();
  const text = `${oneWay ? '1' : '2'}\u0000${sides.join('\u0000')}`;
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}
