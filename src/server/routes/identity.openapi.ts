import { AT, RECOMM_ID, USER_EXAMPLE } from '../openapi/examples.js';
import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of identity.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /identity/merge': {
    id: 'mergeIdentity',
    tag: 'Identity',
    summary: 'Merge sessions into a user',
    description:
      "Attributes the sessions' history to the user; a repeat merges nothing and says `alreadyMerged`.",
    example: { userId: 'u-42', sessionIds: ['s-1'] },
    answer: { merged: 2, alreadyMerged: false },
  },
  'GET /users/:userId/export': {
    id: 'exportUser',
    tag: 'Identity',
    summary: "Export a user's data",
    description:
      'The user row, its interactions and impressions (merged sessions included) and merge ledger. API key only.',
    body: R.USER_EXPORT,
    answer: {
      user: USER_EXAMPLE,
      interactions: [
        {
          eventId: null,
          userId: 'u-42',
          sessionId: null,
          itemId: 'sku-1',
          type: 'purchase',
          weight: 4,
          scenarioSlug: 'home',
          country: null,
          timestamp: AT,
          receivedAt: AT,
        },
      ],
      impressions: [
        {
          eventId: null,
          userId: 'u-42',
          itemIds: ['sku-1', 'sku-2'],
          scenarioSlug: 'home',
          country: null,
          recommId: RECOMM_ID,
          timestamp: AT,
          receivedAt: AT,
        },
      ],
      merges: [{ userId: 'u-42', sessionId: 's-1', eventsCopied: 2, mergedAt: AT }],
    },
  },
  'DELETE /users/:userId': {
    id: 'deleteUser',
    tag: 'Identity',
    summary: 'Delete a user',
    description:
      'Removes the user and its merged sessions from the store, the lake and the serving state. API key only; 204.',
    status: 204,
    body: null,
  },
};
