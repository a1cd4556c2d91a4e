import { describe, expect, it } from 'vitest';
import { countSegments } from '../../../src/config/segment-counts.js';
import { segmentsOfItem } from '../../../src/engine/item-segments.js';
import type { Segmentation } from '../../../src/contract/scenarios.js';
import { ItemCatalog } from '../../../src/state/item-catalog.js';
import type { StoredItem } from '../../../src/store/rows.js';

function item(externalId: string, fields: Partial<StoredItem> = {}): StoredItem {
  return {
    externalId,
    category: null,
    attributes: {},
    expiresAt: null,
    available: true,
    feedManaged: false,
    createdAt: Date.UTC(2024, 0, 1),
    updatedAt: Date.UTC(2024, 0, 1),
    ...fields,
  };
}

function property(path: string): Segmentation {
  return { segmentationId: 'p', type: 'property', property: path };
}

function nextql(expression: string): Segmentation {
  return { segmentationId: 'n', type: 'auto-nextql', expression };
}

function catalogOf(...items: StoredItem[]): ItemCatalog {
  const catalog = new ItemCatalog();
  for (const stored of items) catalog.upsert(stored);
  return catalog;
}

describe('segmentsOfItem, property segmentations', () => {
  const catalog = catalogOf(
    item('a', {
      category: 'shoes',
      attributes: {
        brand: 'acme',
        price: 12.5,
        onSale: true,
        tags: ['x', 1, null, { y: 1 }, 'x'],
        size: { eu: 42 },
      },
    }),
  );
  const id = catalog.idOf('a');

  it.each([
    ['category', ['shoes']],
    ['externalId', ['a']],
    ['available', ['true']],
    ['createdAt', ['2024-01-01T00:00:00.000Z']],
    ['attributes.brand', ['acme']],
    ['attributes.price', ['12.5']],
    ['attributes.onSale', ['true']],
    ['attributes.tags', ['1', 'x']],
    ['attributes.size.eu', ['42']],
    ['attributes.size', []],
    ['expiresAt', []],
    ['brand', []],
    ['attributes.missing', []],
    ['attributes.brand.length', []],
    ['attributes.__proto__', []],
  ])('reads the raw document path %s', (path, expected) => {
    expect(segmentsOfItem(property(path), catalog, id)).toEqual(expected);
  });
});

describe('segmentsOfItem, auto-nextql segmentations', () => {
  it('evaluates the expression on the item', () => {
    const catalog = catalogOf(
      item('a', { category: 'shoes', attributes: { price: 150, genres: ['rock', 'jazz'] } }),
      item('b', { attributes: { price: 50 } }),
    );
    const genres = nextql(`map(lambda g: string(g, "genre-%s"), 'genres') + {"all"}`);
    expect(segmentsOfItem(genres, catalog, catalog.idOf('a'))).toEqual(['all', 'genre-jazz', 'genre-rock']);
    expect(segmentsOfItem(genres, catalog, catalog.idOf('b'))).toEqual(['all']);
    const band = nextql(`if 'price' > 100 and 'category' = "shoes" then {"premium"} else {"budget"}`);
    expect(segmentsOfItem(band, catalog, catalog.idOf('a'))).toEqual(['premium']);
    expect(segmentsOfItem(band, catalog, catalog.idOf('b'))).toEqual(['budget']);
  });

  it('gives no segment to an id known only from events', () => {
    const catalog = new ItemCatalog();
    const ghost = catalog.ensureId('ghost');
    expect(segmentsOfItem(nextql(`{"all"}`), catalog, ghost)).toEqual([]);
  });
});

describe('segment list caching', () => {
  it('reuses a list until the catalog changes, and never shares lists between definitions', () => {
    const catalog = catalogOf(item('a', { category: 'shoes' }));
    const id = catalog.idOf('a');
    const byCategory = property('category');
    const first = segmentsOfItem(byCategory, catalog, id);
    expect(segmentsOfItem(byCategory, catalog, id)).toBe(first);

    catalog.upsert(item('a', { category: 'boots' }));
    expect(segmentsOfItem(byCategory, catalog, id)).toEqual(['boots']);
    expect(segmentsOfItem(property('externalId'), catalog, id)).toEqual(['a']);
  });
});

describe('countSegments', () => {
  it('counts catalog items, available or not, largest segment first, then by name', () => {
    const catalog = catalogOf(
      item('a', { category: 'b-cat' }),
      item('b', { category: 'a-cat', available: false }),
      item('c', { category: 'c-cat' }),
      item('d', { category: 'c-cat' }),
      item('e'),
    );
    catalog.ensureId('ghost');
    expect(countSegments(property('category'), catalog)).toEqual([
      { name: 'c-cat', itemCount: 2 },
      { name: 'a-cat', itemCount: 1 },
      { name: 'b-cat', itemCount: 1 },
    ]);
    expect(countSegments(nextql(`{"all"}`), catalog)).toEqual([{ name: 'all', itemCount: 5 }]);
  });
});
