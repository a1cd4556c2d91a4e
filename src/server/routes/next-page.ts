import type { FastifyInstance } from 'fastify';
import { NEXT_PAGE_BODY, type NextPageBody } from '../../contract/next-page.js';
import { batchExclusions } from '../batch-requests.js';
import { SCOPE } from '../plugins/auth.js';
import { recommenderFor } from '../warm-up-request.js';

/**
 * `POST /recommendations/next` (docs/guide.md, "The next page"): the next items of the ranking an
 * earlier answer's recommId names. Every credential that may fetch recommendations may page them.
 */
export async function nextPageRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/recommendations/next',
    { config: { kinds: SCOPE.browser }, schema: { body: NEXT_PAGE_BODY } },
    (request, reply) => {
      const { recommId, count } = request.body as NextPageBody;
      recommenderFor(app, request).next(
        request.tenant,
        recommId,
        count,
        (answer) => {
          if (typeof answer === 'string') reply.type('application/json; charset=utf-8').send(answer);
          else reply.send(answer);
        },
        batchExclusions(request),
      );
    },
  );
}
