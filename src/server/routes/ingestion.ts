import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import {
  ACCEPTED,
  IMPRESSIONS_BODY,
  INTERACTIONS_BODY,
  ITEMS_BODY,
  UPSERTED,
  USERS_BODY,
} from '../../contract/ingestion.js';
import { appendImpressions, appendInteractions } from '../../ingestion/events.js';
import { upsertItems } from '../../ingestion/items.js';
import { upsertUsers } from '../../ingestion/users.js';
import { SCOPE } from '../plugins/auth.js';

/** Ingestion takes every tenant credential but the public token, which never writes. */
const config = { kinds: SCOPE.tenant };

export async function ingestionRoutes(app: FastifyInstance): Promise<void> {
  app.post(
    '/ingestion/items',
    { config, schema: { body: ITEMS_BODY, response: { 200: UPSERTED } } },
    async (request) => {
      const { items } = request.body as z.infer<typeof ITEMS_BODY>;
      return { upserted: await upsertItems(app.runtime, request.tenant, items) };
    },
  );
  app.post(
    '/ingestion/users',
    { config, schema: { body: USERS_BODY, response: { 200: UPSERTED } } },
    async (request) => {
      const { users } = request.body as z.infer<typeof USERS_BODY>;
      return { upserted: await upsertUsers(app.runtime, request.tenant, users) };
    },
  );
  app.post(
    '/ingestion/interactions',
    { config, schema: { body: INTERACTIONS_BODY, response: { 200: ACCEPTED } } },
    async (request) => {
      const { interactions } = request.body as z.infer<typeof INTERACTIONS_BODY>;
      return appendInteractions(app.runtime, request.tenant, interactions);
    },
  );
  app.post(
    '/ingestion/impressions',
    { config, schema: { body: IMPRESSIONS_BODY, response: { 200: ACCEPTED } } },
    async (request) => {
      const { impressions } = request.body as z.infer<typeof IMPRESSIONS_BODY>;
      return appendImpressions(app.runtime, request.tenant, impressions);
    },
  );
}
