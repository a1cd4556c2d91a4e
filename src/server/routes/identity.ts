import type { FastifyInstance } from 'fastify';
import { MERGE_BODY, MERGE_RESULT, USER_PARAMS, type MergeBody } from '../../contract/identity.js';
import { mergeIdentity } from '../../identity/merge.js';
import { deleteUser, exportUser } from '../../identity/user-data.js';
import { SCOPE } from '../plugins/auth.js';

export async function identityRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/identity/merge',
    { schema: { body: MERGE_BODY, response: { 200: MERGE_RESULT } } },
    async (request) => {
      const { userId, sessionIds } = request.body as MergeBody;
      return mergeIdentity(app.runtime, request.tenant, userId, sessionIds);
    },
  );

  // Personal data leaves or goes only with the API key (spec, "Authentication", rule 3).
  const apiKeyOnly = { kinds: SCOPE.apiKey };

  app.get('/users/:userId/export', { config: apiKeyOnly, schema: { params: USER_PARAMS } }, async (request) =>
    exportUser(app.runtime, request.tenant, (request.params as { userId: string }).userId),
  );

  app.delete(
    '/users/:userId',
    { config: apiKeyOnly, schema: { params: USER_PARAMS } },
    async (request, reply) => {
      const { userId } = request.params as { userId: string };
      await deleteUser(app.runtime, request.tenant, userId, (identities) =>
        app.staleAnswers.identitiesForgotten(request.tenant.tenantId, identities),
      );
      return reply.code(204).send();
    },
  );
}
