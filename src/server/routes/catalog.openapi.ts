import { AT, USER_EXAMPLE } from '../openapi/examples.js';
import { BULK_DELETED, BULK_UPDATED } from '../../contract/catalog-bulk.js';
import * as R from '../openapi/responses.js';
import type { Operations } from '../openapi/operation.js';

const ITEM_EXAMPLE = {
  externalId: 'sku-1',
  category: 'shoes',
  attributes: { name: 'Trail runner', price: 89 },
  expiresAt: null,
  available: true,
  feedManaged: false,
  createdAt: AT,
  updatedAt: AT,
};

const SETTINGS_EXAMPLE = {
  fieldMapper: {},
  dimensions: [],
  freshness: { keyPath: null, type: 'date', fallbackToCreatedAt: true },
  userProvisioningModes: ['on_first_known_interaction'],
  interactionWeights: { view: 1, cart: 2, purchase: 4, rating: 3, bookmark: 3 },
};

/**
 * What the OpenAPI document says of the routes of catalog.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /catalog/items': {
    id: 'listItems',
    tag: 'Catalog',
    summary: 'List the items',
    description: 'The stored items a page at a time (`page`, `limit` up to 1,000), with the total.',
    body: R.ITEM_PAGE,
    answer: { data: [ITEM_EXAMPLE], page: 1, limit: 50, total: 1 },
  },
  'GET /catalog/items/:externalId': {
    id: 'getItem',
    tag: 'Catalog',
    summary: 'Get an item',
    description: 'One stored item; 404 when the catalog does not hold it.',
    body: R.ITEM,
    answer: ITEM_EXAMPLE,
  },
  'DELETE /catalog/items/:externalId': {
    id: 'deleteItem',
    tag: 'Catalog',
    summary: 'Delete an item',
    description:
      'Removes the item, its interactions and the impressions of it (an impression keeps the other items ' +
      'it showed) from the store, the serving state, the answer cache, vectors and search, the lake and ' +
      'every kept model version; the models are built again without it. 204; 404 `ITEM_NOT_FOUND` when ' +
      'neither the store nor the serving state knows the id.',
    status: 204,
    body: null,
  },
  'POST /catalog/items/bulk-update': {
    id: 'bulkUpdateItems',
    tag: 'Catalog',
    summary: 'Update the items a filter matches',
    description:
      'Sets `available`, `category` and attributes (merged key by key, `null` removes a key) on every item ' +
      'the nextQL `filter` matches (`true`: every item), written as item upserts are; answers how many.',
    body: BULK_UPDATED,
    example: { filter: '\'category\' = "shoes"', set: { available: false, attributes: { sale: null } } },
    answer: { updated: 12 },
  },
  'POST /catalog/items/bulk-delete': {
    id: 'bulkDeleteItems',
    tag: 'Catalog',
    summary: 'Delete the items a filter matches',
    description:
      'Deletes every item the nextQL `filter` matches, as `DELETE /catalog/items/{externalId}` deletes one; ' +
      'answers how many.',
    body: BULK_DELETED,
    example: { filter: '\'category\' = "discontinued"' },
    answer: { deleted: 3 },
  },
  'GET /catalog/users': {
    id: 'listUsers',
    tag: 'Catalog',
    summary: 'List the users',
    description: 'The stored users a page at a time (`page`, `limit`), with the total.',
    body: R.USER_PAGE,
    answer: { data: [USER_EXAMPLE], page: 1, limit: 50, total: 1 },
  },
  'GET /catalog/tenant-settings': {
    id: 'getTenantSettings',
    tag: 'Catalog',
    summary: 'Get the tenant settings',
    description: 'Every setting: fieldMapper, dimensions, freshness, userProvisioningModes and the rest.',
    body: R.SETTINGS,
    answer: SETTINGS_EXAMPLE,
  },
  'PUT /catalog/tenant-settings': {
    id: 'updateTenantSettings',
    tag: 'Catalog',
    summary: 'Update the tenant settings',
    description:
      'Partial: the fields sent replace those fields (in `interactionWeights`, a type left out takes its default weight). API key or JWT only.',
    body: R.SETTINGS,
    example: { userProvisioningModes: ['on_first_known_interaction'], interactionWeights: { bookmark: 3 } },
    answer: SETTINGS_EXAMPLE,
  },
};
