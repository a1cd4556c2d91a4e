import { z } from 'zod';
import { RECOMM_ID, RECOMMENDED } from '../openapi/examples.js';
import type { Operations } from '../openapi/operation.js';

const BATCH_RESULTS = z.looseObject({
  results: z.array(z.looseObject({ status: z.number().int(), body: z.unknown() })),
});

/**
 * What the OpenAPI document says of the routes of batch.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /batch': {
    id: 'batch',
    tag: 'Recommendations',
    summary: 'Several requests in one',
    description:
      "Runs 1 to 1,000 requests in order, each as if sent alone with the batch's X-Tenant-Id and credential (a signed batch is signed as one POST), and answers one result per request, in order: its status and the body the route alone would have answered, errors included (a request outside the credential's scope gets its own 403; a `/batch` inside a batch gets 400 INVALID_BODY). With `distinctRecomms: true`, no item appears in two recommendation results (later ones skip the items of earlier ones). The batch counts once against the rate limit, and each of its requests once more. Every tenant credential may send one, the public token included.",
    body: BATCH_RESULTS,
    example: {
      requests: [
        { method: 'POST', path: '/recommendations', body: { scenario: 'home', userId: 'u-42', count: 2 } },
        { method: 'GET', path: '/recommendations/item-to-item/sku-1', query: { count: 2 } },
      ],
      distinctRecomms: true,
    },
    answer: {
      results: [
        {
          status: 200,
          body: {
            items: RECOMMENDED,
            count: 2,
            algorithm: 'weighted-history',
            scenario: 'home',
            recommId: RECOMM_ID,
          },
        },
        {
          status: 200,
          body: {
            items: [
              { itemId: 'sku-4', attributes: { name: 'Canvas tote', price: 35 }, score: 0.72 },
              { itemId: 'sku-9', attributes: { name: 'Wool socks', price: 12 }, score: 0.65 },
            ],
            count: 2,
            algorithm: 'co-occurrence',
            recommId: '3f2a1c9e-5b7d-4e8f-9a0b-1c2d3e4f5a6c',
          },
        },
      ],
    },
  },
};
