import type { OperationDoc, Tag } from './operation.js';
import * as R from './responses.js';

/*
 * Example values, one shop throughout (tenant acme, user u-42, items sku-1…), shared by the operations
 * whose bodies have the same shape.
 */
export const AT = '2025-06-02T09:00:00.000Z';

export const RECOMM_ID = '3f2a1c9e-5b7d-4e8f-9a0b-1c2d3e4f5a6b';

export const USER_EXAMPLE = {
  externalId: 'u-42',
  attributes: { country: 'DE' },
  createdAt: AT,
  updatedAt: AT,
};

export const RECOMMENDED = [
  { itemId: 'sku-2', attributes: { name: 'Trail runner GTX', price: 119 }, score: 0.91 },
  { itemId: 'sku-7', attributes: { name: 'Road racer', price: 95 }, score: 0.84 },
];

/** A recommendation answer of an algorithm (recently-viewed ranks without scores). */
export function recommended(algorithm: string, more: object = {}) {
  const items =
    algorithm === 'recently-viewed'
      ? RECOMMENDED.map(({ itemId, attributes }) => ({ itemId, attributes }))
      : RECOMMENDED;
  return { items, count: items.length, algorithm, ...more, recommId: RECOMM_ID };
}

/** The five operations of a configuration resource (CONTRACT.md, "Configuration resources"). */
export function resource(
  path: string,
  key: string,
  noun: string,
  tag: Tag,
  what: string,
  example: object,
  /** What the daemon fills in when it stores the example. */
  defaults: object = {},
  idName = noun.replace(/ (\w)/g, (_, c: string) => c.toUpperCase()),
): Record<string, OperationDoc> {
  const one = `${path}/:${key === 'segmentationId' ? 'id' : key}`;
  const Name = idName.charAt(0).toUpperCase() + idName.slice(1);
  const stored = { ...example, ...defaults };
  return {
    [`POST ${path}`]: {
      id: `create${Name}`,
      tag,
      summary: `Create a ${noun}`,
      description: `${what} Answers 201 with the stored ${noun}; 409 CONFLICT when its ${key} is taken.`,
      status: 201,
      body: R.RESOURCE(key),
      errors: [409],
      example,
      answer: stored,
    },
    [`GET ${path}`]: {
      id: `list${Name}s`,
      tag,
      summary: `List the ${noun}s`,
      description: `Every ${noun} of the tenant, as \`{ data: [...] }\`.`,
      body: R.RESOURCES(key),
      answer: { data: [stored] },
    },
    [`GET ${one}`]: {
      id: `get${Name}`,
      tag,
      summary: `Get a ${noun}`,
      description: `One ${noun} by its ${key}; 404 when there is none.`,
      body: R.RESOURCE(key),
      answer: stored,
    },
    [`PUT ${one}`]: {
      id: `replace${Name}`,
      tag,
      summary: `Replace a ${noun}`,
      description: `Replaces the whole ${noun} (fields left out take their defaults); 404 when there is none.`,
      body: R.RESOURCE(key),
      example,
      answer: stored,
    },
    [`DELETE ${one}`]: {
      id: `delete${Name}`,
      tag,
      summary: `Delete a ${noun}`,
      description: `Deletes the ${noun}; answers 204 without a body, 404 when there is none.`,
      status: 204,
      body: null,
    },
  };
}
