import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  ALGORITHM_PARAMS,
  ITEMS_TO_ITEMS_BODY,
  LEGACY_QUERY,
  RECOMMENDATION_BODY,
  type ItemsToItemsBody,
  type LegacyQuery,
  type RecommendationBody,
} from '../../contract/recommendations.js';
import type { LogicType } from '../../contract/scenarios.js';
import { describeAlgorithms } from '../../engine/algorithms/registry.js';
import { checkGetPaths, checkRequestTarget } from '../../engine/projection.js';
import {
  fromBody,
  fromItemsToItems,
  fromLegacyQuery,
  type RecommendationRequest,
} from '../../engine/request.js';
import { batchExclusions } from '../batch-requests.js';
import { SCOPE } from '../plugins/auth.js';
import { recommenderFor } from '../warm-up-request.js';

/** Recommendations may be fetched by every credential kind of the tenant, public tokens included. */
const config = { kinds: SCOPE.browser };
/**
 * A client asks for the same list again and again in the same words, and answering from the cache costs
 * less than parsing and validating the body anew: such bodies are remembered (RepeatedBodies). A noCache
 * body is ranked every time, which costs far more than its parsing, so it is not worth the room.
 */
const postConfig = Object.assign({}, config, {
  rememberBody: (parsed: unknown) => (parsed as { noCache?: unknown } | null)?.noCache !== true,
});

const USER_PARAMS = z.strictObject({ userId: z.string().min(1).max(512) });
const ITEM_PARAMS = z.strictObject({ itemId: z.string().min(1).max(512) });

export async function recommendationRoutes(app: FastifyInstance): Promise<void> {
  /**
   * Returns nothing: a handler that returns the reply makes Fastify wait for it with a promise and stream
   * listeners, which costs more than the cached path's own work.
   */
  const serve = (request: FastifyRequest, reply: FastifyReply, recommendation: RecommendationRequest) => {
    // A later list of a batch with distinctRecomms skips the items of its earlier ones.
    const exclude = batchExclusions(request);
    if (exclude) recommendation = Object.assign({}, recommendation, { exclude });
    recommenderFor(app, request).recommend(request.tenant, recommendation, (answer) => {
      // The answer is JSON text; with this content type Fastify sends it as it is.
      if (typeof answer === 'string') reply.type('application/json; charset=utf-8').send(answer);
      else reply.send(answer);
    });
  };

  // Handlers are synchronous (a thrown error still reaches the error handler): a promise per request
  // costs more than the cached path's own work.
  app.post(
    '/recommendations',
    { config: postConfig, schema: { body: RECOMMENDATION_BODY } },
    (request, reply) => {
      serve(request, reply, fromBody(request.body as RecommendationBody));
    },
  );

  const legacyGet = (path: string, logicType: LogicType, seed: 'userId' | 'itemId') => {
    app.get(
      path,
      {
        config,
        schema: { params: seed === 'userId' ? USER_PARAMS : ITEM_PARAMS, querystring: LEGACY_QUERY },
        // The request target's length is checked first, so validation errors wait for it (a hook would
        // cost every request a hook run).
        attachValidation: true,
      },
      (request, reply) => {
        checkRequestTarget(request.url);
        if (request.validationError) throw request.validationError;
        const params = request.params as Record<typeof seed, string>;
        const recommendation = fromLegacyQuery(
          logicType,
          { [seed]: params[seed] },
          request.query as LegacyQuery,
        );
        checkGetPaths(recommendation.projection);
        serve(request, reply, recommendation);
      },
    );
  };
  legacyGet('/recommendations/user-to-item/:userId', 'user-to-item', 'userId');
  legacyGet('/recommendations/item-to-item/:itemId', 'item-to-item', 'itemId');
  legacyGet('/recommendations/recently-viewed/:userId', 'recently-viewed', 'userId');
  legacyGet('/recommendations/similar-products/:itemId', 'similar-products', 'itemId');

  app.post(
    '/recommendations/items-to-items',
    { config: postConfig, schema: { body: ITEMS_TO_ITEMS_BODY, querystring: LEGACY_QUERY } },
    (request, reply) => {
      serve(request, reply, fromItemsToItems(request.body as ItemsToItemsBody, request.query as LegacyQuery));
    },
  );

  app.get('/recommendations/algorithms', { config }, async () => ({ data: describeAlgorithms() }));
  app.get(
    '/recommendations/algorithms/:logicType',
    { config, schema: { params: ALGORITHM_PARAMS } },
    async (request) => ({
      data: describeAlgorithms((request.params as z.infer<typeof ALGORITHM_PARAMS>).logicType),
    }),
  );
}
