import { describe, expect, it } from 'vitest';
import {
  checkGetPaths,
  checkRequestTarget,
  projectionMode,
  projectItem,
} from '../../../src/engine/projection.js';
import { itemDocument } from '../../../src/contract/catalog.js';
import { apiErrorOf, item } from '../../support/tenant-fixture.js';

const storedItem = item('sku-1', {
  category: 'shoes',
  attributes: { name: 'Runner', price: 80, size: { eu: 42, us: '9' }, tags: ['a', 'b'], nothing: null },
  createdAt: Date.parse('2026-01-02T03:04:05Z'),
});
const stored = itemDocument(storedItem);

describe('projectionMode', () => {
  it('full when returnProperties and includedProperties are omitted, or only returnProperties=true', () => {
    expect(projectionMode({})).toEqual({ mode: 'full' });
    expect(projectionMode({ returnProperties: true })).toEqual({ mode: 'full' });
  });

  it('lean with returnProperties=false, includedProperties ignored (even unsafe ones)', () => {
    expect(projectionMode({ returnProperties: false })).toEqual({ mode: 'lean' });
    expect(projectionMode({ returnProperties: false, includedProperties: ['attributes.__proto__'] })).toEqual(
      {
        mode: 'lean',
      },
    );
  });

  it('selective with includedProperties, whether returnProperties is true or omitted', () => {
    const selective = { mode: 'selective', paths: [['attributes', 'name'], ['category']] };
    expect(projectionMode({ includedProperties: ['attributes.name', 'category'] })).toEqual(selective);
    expect(
      projectionMode({ returnProperties: true, includedProperties: ['attributes.name', 'category'] }),
    ).toEqual(selective);
  });

  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'valueOf'])(
    'a path with the unsafe segment %s, at any depth, is 400 UNSAFE_PATH',
    (segment) => {
      for (const path of [segment, `attributes.${segment}`, `attributes.size.${segment}.x`]) {
        const error = apiErrorOf(() => projectionMode({ includedProperties: ['attributes.name', path] }));
        expect([error.code, error.statusCode]).toEqual(['UNSAFE_PATH', 400]);
      }
    },
  );

  it('segments are compared exactly: a safe name containing an unsafe word is fine', () => {
    expect(projectionMode({ includedProperties: ['attributes.constructorName'] }).mode).toBe('selective');
  });

  it('a path with an empty segment is 400 INVALID_QUERY', () => {
    expect(apiErrorOf(() => projectionMode({ includedProperties: ['attributes..name'] })).code).toBe(
      'INVALID_QUERY',
    );
  });
});

describe('projectItem', () => {
  it('lean: itemId only', () => {
    expect(projectItem(stored, { mode: 'lean' })).toEqual({ itemId: 'sku-1' });
  });

  it('full: identity keys and the raw stored document', () => {
    expect(projectItem(stored, { mode: 'full' })).toEqual({
      itemId: 'sku-1',
      externalId: 'sku-1',
      category: 'shoes',
      attributes: stored.attributes,
      expiresAt: null,
      available: true,
      feedManaged: false,
      createdAt: '2026-01-02T03:04:05.000Z',
      updatedAt: '2026-01-02T03:04:05.000Z',
    });
  });

  const selective = (...paths: string[]) =>
    projectItem(stored, projectionMode({ includedProperties: paths }));

  it('selective: itemId and exactly the requested raw paths', () => {
    expect(selective('attributes.name', 'attributes.size.eu', 'category')).toEqual({
      itemId: 'sku-1',
      attributes: { name: 'Runner', size: { eu: 42 } },
      category: 'shoes',
    });
    expect(selective('attributes.price')).toEqual({ itemId: 'sku-1', attributes: { price: 80 } });
  });

  it('paths are literal: `name` is not `attributes.name`', () => {
    expect(selective('name')).toEqual({ itemId: 'sku-1' });
  });

  it('a safe path missing from the item is omitted silently (arrays are not walked)', () => {
    expect(
      selective('attributes.color', 'attributes.size.cm', 'attributes.tags.0', 'attributes.name.x'),
    ).toEqual({ itemId: 'sku-1' });
  });

  it('null values and whole objects are copied as they are', () => {
    expect(selective('attributes.nothing', 'attributes.size', 'attributes.tags')).toEqual({
      itemId: 'sku-1',
      attributes: { nothing: null, size: { eu: 42, us: '9' }, tags: ['a', 'b'] },
    });
  });

  it('createdAt is the ISO string of the raw document', () => {
    expect(selective('createdAt')).toEqual({
      itemId: 'sku-1',
      createdAt: '2026-01-02T03:04:05.000Z',
    });
  });

  it('projecting never changes the stored item', () => {
    const before = structuredClone(stored);
    selective('attributes', 'attributes.size.eu', 'attributes.size');
    projectItem(stored, { mode: 'full' });
    expect(stored).toEqual(before);
  });
});

describe('limits of the legacy GET routes', () => {
  const paths = (n: number) => Array.from({ length: n }, (_, i) => `attributes.k${i}`);

  it('at most 20 included paths', () => {
    expect(() => checkGetPaths({ includedProperties: paths(20) })).not.toThrow();
    expect(apiErrorOf(() => checkGetPaths({ includedProperties: paths(21) })).code).toBe('TOO_MANY_PATHS');
  });

  it('a request target of at most 2048 characters', () => {
    expect(() => checkRequestTarget('/'.padEnd(2048, 'x'))).not.toThrow();
    const error = apiErrorOf(() => checkRequestTarget('/'.padEnd(2049, 'x')));
    expect([error.code, error.statusCode]).toEqual(['URL_TOO_LONG', 400]);
  });
});
