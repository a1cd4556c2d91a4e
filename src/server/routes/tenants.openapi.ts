import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

const RATE_LIMITS_EXAMPLE = { api: 1200, public: 6000 };

/**
 * What the OpenAPI document says of the routes of tenants.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /tenants': {
    id: 'listTenants',
    tag: 'Tenants',
    summary: 'List the tenants',
    description: 'Every tenant id, as `{ tenants: [...] }`.',
    answer: { tenants: ['acme'] },
  },
  'POST /tenants': {
    id: 'createTenant',
    tag: 'Tenants',
    summary: 'Create a tenant',
    description:
      'Creates a tenant and answers 201 with its API key, private token and public token, shown this once; 409 CONFLICT when it exists.',
    status: 201,
    errors: [409],
    example: { tenantId: 'acme' },
    answer: {
      tenantId: 'acme',
      apiKey: 'nrk_3mVq8TzL1pWc0RkY7bNf2HsJd5Ga9UeE',
      privateToken: 'nrp_Vd2kQ9sLx7TmB4cN1wRz8HfYp6Jg3Ae5Uo0KiMnXt2c',
      publicToken: 'nrpub_Hs4nWq1Zr8Lc5Tv2Yb7Kd0Mx9Pf3Ga6Je1UiOoRt5wE',
    },
  },
  'POST /tenants/:tenantId/rotate': {
    id: 'rotateCredential',
    tag: 'Tenants',
    summary: 'Rotate a credential',
    description:
      'Replaces one credential (`key`: api, private or public); the old one stops working at once.',
    body: R.CREDENTIALS,
    errors: [404],
    example: { key: 'api' },
    answer: { tenantId: 'acme', apiKey: 'nrk_8QwE2rT5yU1iO4pA7sD0fG3hJ6kL9zXc' },
  },
  'GET /tenants/:tenantId/rate-limits': {
    id: 'getRateLimits',
    tag: 'Tenants',
    summary: "Get a tenant's rate limits",
    description: 'Requests per minute per credential kind; a kind left out is unlimited.',
    body: R.RATE_LIMITS,
    answer: RATE_LIMITS_EXAMPLE,
  },
  'PUT /tenants/:tenantId/rate-limits': {
    id: 'setRateLimits',
    tag: 'Tenants',
    summary: "Set a tenant's rate limits",
    description:
      'Requests per minute per credential kind (api, private, public, jwt); over budget a request is 429 RATE_LIMITED with Retry-After.',
    body: R.RATE_LIMITS,
    example: RATE_LIMITS_EXAMPLE,
    answer: RATE_LIMITS_EXAMPLE,
  },
};
