import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { itemDocument, userDocument } from '../../contract/catalog.js';
import { NON_EMPTY_ID, PAGE_QUERY, type PageQuery } from '../../contract/common.js';
import { ApiError } from '../../contract/errors.js';
import { TENANT_SETTINGS_UPDATE, type TenantSettingsUpdate } from '../../contract/tenant-settings.js';
import { listItems, listUsers } from '../../store/catalog-queries.js';
import { updateTenantSettings } from '../../tenants/settings-service.js';
import { SCOPE } from '../plugins/auth.js';

export async function catalogRoutes(app: FastifyInstance): Promise<void> {
  app.get('/catalog/items', { schema: { querystring: PAGE_QUERY } }, async (request) => {
    const { page, limit } = request.query as PageQuery;
    const result = await app.runtime.store.read((db) => listItems(db, request.tenant.tenantId, page, limit));
    return { data: result.rows.map(itemDocument), page, limit, total: result.total };
  });

  app.get(
    '/catalog/items/:externalId',
    { schema: { params: z.strictObject({ externalId: NON_EMPTY_ID }) } },
    async (request) => {
      const { externalId } = request.params as { externalId: string };
      const { catalog } = request.tenant;
      const document = catalog.rawDocument(catalog.idOf(externalId));
      if (!document) throw new ApiError('NOT_FOUND', `item '${externalId}' does not exist`);
      return document;
    },
  );

  app.get('/catalog/users', { schema: { querystring: PAGE_QUERY } }, async (request) => {
    const { page, limit } = request.query as PageQuery;
    const result = await app.runtime.store.read((db) => listUsers(db, request.tenant.tenantId, page, limit));
    return { data: result.rows.map(userDocument), page, limit, total: result.total };
  });

  app.get('/catalog/tenant-settings', async (request) => request.tenant.settings);

  // The spec allows only JWT or API-key authentication here, never HMAC tokens.
  app.put(
    '/catalog/tenant-settings',
    { config: { kinds: SCOPE.admin }, schema: { body: TENANT_SETTINGS_UPDATE } },
    async (request) =>
      updateTenantSettings(app.runtime, request.tenant, request.body as TenantSettingsUpdate),
  );
}
