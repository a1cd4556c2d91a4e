import { describeAlgorithms } from '../../engine/algorithms/registry.js';
import { recommended } from '../openapi/examples.js';
import type { OperationDoc, Operations } from '../openapi/operation.js';
import * as R from '../openapi/responses.js';

/** Recommendation requests project the items to these paths; the answers below show them so. */
const PROJECTION = ['attributes.name', 'attributes.price'];

/** A legacy GET recommendation route. */
function legacy(logic: string, seed: string, what: string, algorithm: string): OperationDoc {
  const id = logic.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  return {
    id: `${id}Get`,
    tag: 'Recommendations',
    summary: `${logic} recommendations for a ${seed}`,
    description: `${what} Query parameters: \`count\`, \`scenario\`, \`filter\`, \`booster\`, \`includedProperties\`, \`returnProperties\` and the rest of POST /recommendations' fields in query form${logic === 'user-to-item' ? ' (`rotationRate` and `rotationTime` included)' : ''}. Callable by browsers with the public token.`,
    body: R.RECOMMENDATIONS,
    answer: recommended(algorithm),
  };
}

/**
 * What the OpenAPI document says of the routes of recommendations.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'POST /recommendations': {
    id: 'recommend',
    tag: 'Recommendations',
    summary: 'Recommend',
    description:
      "One ranked list: the scenario (or `logicType`) decides the algorithm; filters, boosters, constraints, segments, geo and the purchase cap shape it. Filters and boosters may read the request's context: `context_item('key')` (the seed item; items-to-items: the first of `itemIds`) and `context_user('key')` (the user's stored document); without it their predicates are false. user-to-item takes rotation: `rotationRate` (0..1, default 0: off; the scenario's by default) and `rotationTime` (seconds > 0, default 7200): an item returned to the same user k times within the window has its score multiplied by (1 − rotationRate)^k, and with rate 1 it is not returned again while other candidates remain; such requests are never answered from the cache. Callable by browsers with the public token.",
    body: R.RECOMMENDATIONS,
    errors: [404],
    example: { scenario: 'home', userId: 'u-42', count: 2, includedProperties: PROJECTION },
    answer: recommended('weighted-history', { scenario: 'home' }),
  },
  'POST /recommendations/items-to-items': {
    id: 'itemsToItems',
    tag: 'Recommendations',
    summary: 'Items for several seed items',
    description: 'Items to show beside several seeds (a cart), the seeds left out.',
    body: R.RECOMMENDATIONS,
    errors: [404],
    example: { itemIds: ['sku-1', 'sku-3'], count: 2, includedProperties: PROJECTION },
    answer: recommended('multi-seed-co-occurrence'),
  },
  'GET /recommendations/user-to-item/:userId': legacy(
    'user-to-item',
    'user',
    "Items for a user from the user's history.",
    'weighted-history',
  ),
  'GET /recommendations/item-to-item/:itemId': legacy(
    'item-to-item',
    'item',
    'Items bought or viewed with the item.',
    'co-occurrence',
  ),
  'GET /recommendations/recently-viewed/:userId': legacy(
    'recently-viewed',
    'user',
    "The user's recently viewed items, newest first.",
    'recently-viewed',
  ),
  'GET /recommendations/similar-products/:itemId': legacy(
    'similar-products',
    'item',
    "Items whose text is nearest the item's (vector similarity).",
    'vector-similarity',
  ),
  'GET /recommendations/algorithms': {
    id: 'listAlgorithms',
    tag: 'Recommendations',
    summary: 'List the algorithms',
    description: 'Every algorithm, the logic types it serves and whether it is their default.',
    body: R.ALGORITHMS,
    answer: { data: describeAlgorithms() },
  },
  'GET /recommendations/algorithms/:logicType': {
    id: 'listAlgorithmsOf',
    tag: 'Recommendations',
    summary: 'List the algorithms of a logic type',
    description: 'The algorithms that serve one logic type.',
    body: R.ALGORITHMS,
    answer: { data: describeAlgorithms('item-to-item') },
  },
};
