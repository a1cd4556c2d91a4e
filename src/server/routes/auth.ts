import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { TOKEN_BODY, TOKEN_RESULT } from '../../contract/auth.js';
import { issueToken } from '../../tenants/jwt.js';
import { SCOPE } from '../plugins/auth.js';

export async function authRoutes(app: FastifyInstance): Promise<void> {
  // A token is issued for the API key's tenant; a token cannot issue another (docs/guide.md, "API key and JWT").
  app.post(
    '/auth/token',
    { config: { kinds: SCOPE.apiKey }, schema: { body: TOKEN_BODY, response: { 200: TOKEN_RESULT } } },
    async (request) => {
      const { ttlSeconds } = request.body as z.infer<typeof TOKEN_BODY>;
      return issueToken(app.runtime.jwtSecret, request.tenant.tenantId, ttlSeconds);
    },
  );
}
