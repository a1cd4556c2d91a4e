import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TENANT_ID } from '../../contract/common.js';
import {
  CREATE_TENANT_BODY,
  RATE_LIMITS,
  TENANT_CREDENTIALS,
  TENANT_LIST,
  type RateLimitSettings,
} from '../../contract/tenants.js';
import { ApiError } from '../../contract/errors.js';
import { CREDENTIAL_KINDS } from '../../tenants/credentials.js';
import { setRateLimits } from '../../tenants/rate-limit-service.js';
import { createTenant, rotateCredential } from '../../tenants/tenant-service.js';

const ROTATE_BODY = z.strictObject({ key: z.enum(CREDENTIAL_KINDS) });

export async function tenantRoutes(app: FastifyInstance): Promise<void> {
  const config = { access: 'operator' as const };
  app.get('/tenants', { config, schema: { response: { 200: TENANT_LIST } } }, async () => ({
    tenants: app.runtime.state.ids(),
  }));

  app.post(
    '/tenants',
    { config, schema: { body: CREATE_TENANT_BODY, response: { 201: TENANT_CREDENTIALS } } },
    async (request, reply) => {
      const { tenantId } = request.body as z.infer<typeof CREATE_TENANT_BODY>;
      return reply.code(201).send(await createTenant(app.runtime, tenantId));
    },
  );

  app.post(
    '/tenants/:tenantId/rotate',
    { config, schema: { params: z.strictObject({ tenantId: TENANT_ID }), body: ROTATE_BODY } },
    async (request) => {
      const { tenantId } = request.params as { tenantId: string };
      const { key } = request.body as z.infer<typeof ROTATE_BODY>;
      return rotateCredential(app.runtime, tenantId, key);
    },
  );

  const tenantParams = z.strictObject({ tenantId: TENANT_ID });
  app.get('/tenants/:tenantId/rate-limits', { config, schema: { params: tenantParams } }, async (request) => {
    const { tenantId } = request.params as { tenantId: string };
    const tenant = app.runtime.state.get(tenantId);
    if (!tenant) throw new ApiError('NOT_FOUND', `tenant '${tenantId}' does not exist`);
    return tenant.rateLimits;
  });

  app.put(
    '/tenants/:tenantId/rate-limits',
    { config, schema: { params: tenantParams, body: RATE_LIMITS } },
    async (request) => {
      const { tenantId } = request.params as { tenantId: string };
      return setRateLimits(app.runtime, tenantId, request.body as RateLimitSettings);
    },
  );
}
