import { RECOMM_ID, recommended } from '../openapi/examples.js';
import type { Operations } from '../openapi/operation.js';
import * as R from '../openapi/responses.js';

/**
 * What the OpenAPI document says of the routes of next-page.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /recommendations/next': {
    id: 'nextPage',
    tag: 'Recommendations',
    summary: 'The next page of an answer',
    description:
      "The next `count` items (1 to 100) of the ranking that made the answer `recommId` names: the same request (logic, scenario, filters, boosters, user, country, projection), none of the items of that answer or of the pages before it, unavailable items skipped; shorter, or empty, once the ranking is exhausted. The answer has a recommId of its own, which may be paged in turn. A recommId may be paged for 30 minutes after its answer; an unknown or expired one, or another tenant's, is 404 RECOMM_NOT_FOUND. Pages are kept in the daemon's memory and do not survive a restart. Callable by browsers with the public token.",
    body: R.RECOMMENDATIONS,
    errors: [404],
    example: { recommId: RECOMM_ID, count: 2 },
    answer: recommended('weighted-history', { scenario: 'home' }),
  },
};
