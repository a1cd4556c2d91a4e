import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of lake.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /lake/export': {
    id: 'exportLake',
    tag: 'Operations',
    summary: 'Export to the lake now',
    description:
      'Exports what the store committed to the lake (Parquet) for one tenant (`tenantId`) or every tenant.',
    example: { tenantId: 'acme' },
    answer: {
      exported: [
        {
          tenantId: 'acme',
          tables: [
            { table: 'interactions', rows: 1250 },
            { table: 'impressions', rows: 3400 },
            { table: 'items', rows: 12 },
            { table: 'users', rows: 3 },
          ],
        },
      ],
    },
  },
};
