import { resource } from '../openapi/examples.js';
import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of rules.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = resource(
  '/rules',
  'slug',
  'rule',
  'Configuration',
  'A reusable filter, booster or constraint.',
  { slug: 'in-stock', type: 'filter', expression: "'stock' > 0" },
  { priority: 0 },
);
