import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of auth.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /auth/token': {
    id: 'issueToken',
    tag: 'Auth',
    summary: 'Issue a bearer token',
    description:
      'A JWT for the tenant (claim `tid`), valid `ttlSeconds` (default 3,600, at most 86,400). API key only.',
    example: { ttlSeconds: 3600 },
    answer: {
      token:
        'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0aWQiOiJhY21lIiwiaWF0IjoxNzQ4ODU0ODAwLCJleHAiOjE3NDg4NTg0MDB9.kLn-bhWVBq2WGpPu-Fs6By3fHt6btdymohRg8YFH798',
      expiresAt: '2025-06-02T10:00:00.000Z',
    },
  },
};
