import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { TENANT_ID } from '../../contract/common.js';
import { CREATE_TENANT_BODY, TENANT_CREDENTIALS, TENANT_LIST } from '../../contract/tenants.js';
import { CREDENTIAL_KINDS } from '../../tenants/credentials.js';
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
}
