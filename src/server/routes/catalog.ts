import type { FastifyInstance } from 'fastify';
import { itemDocument, userDocument } from '../../contract/catalog.js';
import { PAGE_QUERY, type PageQuery } from '../../contract/common.js';
import {
  BULK_DELETE_BODY,
  BULK_DELETED,
  BULK_UPDATE_BODY,
  BULK_UPDATED,
  ITEM_PARAMS,
  type BulkDeleteBody,
  type BulkUpdateBody,
} from '../../contract/catalog-bulk.js';
import { ApiError } from '../../contract/errors.js';
import { TENANT_SETTINGS_UPDATE, type TenantSettingsUpdate } from '../../contract/tenant-settings.js';
import { matchingItems, updateItems } from '../../ingestion/bulk-items.js';
import { deleteItems } from '../../ingestion/item-deletes.js';
import { updateTenantSettings } from '../../tenants/settings-service.js';
import { SCOPE } from '../plugins/auth.js';

export async function catalogRoutes(app: FastifyInstance): Promise<void> {
  app.get('/catalog/items', { schema: { querystring: PAGE_QUERY } }, async (request) => {
    const { page, limit } = request.query as PageQuery;
    const result = await app.runtime.store.catalog.listItems(request.tenant.tenantId, page, limit);
    return { data: result.rows.map(itemDocument), page, limit, total: result.total };
  });

  app.get('/catalog/items/:externalId', { schema: { params: ITEM_PARAMS } }, async (request) => {
    const { externalId } = request.params as { externalId: string };
    const { catalog } = request.tenant;
    const document = catalog.rawDocument(catalog.idOf(externalId));
    if (!document) throw new ApiError('NOT_FOUND', `item '${externalId}' does not exist`);
    return document;
  });

  // Deleting items (docs/guide.md, "Deleting items"): every credential that writes the catalog.
  const forgetAnswers = (tenantId: string) => () => app.staleAnswers.itemsRemoved(tenantId);

  app.delete('/catalog/items/:externalId', { schema: { params: ITEM_PARAMS } }, async (request, reply) => {
    const { externalId } = request.params as { externalId: string };
    const { tenant } = request;
    await deleteItems(app.runtime, tenant, [externalId], forgetAnswers(tenant.tenantId), true);
    return reply.code(204).send();
  });

  app.post(
    '/catalog/items/bulk-update',
    { schema: { body: BULK_UPDATE_BODY, response: { 200: BULK_UPDATED } } },
    async (request) => {
      const { filter, set } = request.body as BulkUpdateBody;
      const ids = matchingItems(request.tenant, filter);
      return { updated: await updateItems(app.runtime, request.tenant, ids, set) };
    },
  );

  app.post(
    '/catalog/items/bulk-delete',
    { schema: { body: BULK_DELETE_BODY, response: { 200: BULK_DELETED } } },
    async (request) => {
      const { filter } = request.body as BulkDeleteBody;
      const { tenant } = request;
      const ids = matchingItems(tenant, filter);
      return { deleted: await deleteItems(app.runtime, tenant, ids, forgetAnswers(tenant.tenantId)) };
    },
  );

  app.get('/catalog/users', { schema: { querystring: PAGE_QUERY } }, async (request) => {
    const { page, limit } = request.query as PageQuery;
    const result = await app.runtime.store.catalog.listUsers(request.tenant.tenantId, page, limit);
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
