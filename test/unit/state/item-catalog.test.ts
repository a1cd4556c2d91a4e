import { describe, expect, it } from 'vitest';
import { ItemCatalog, catalogItem } from '../../../src/state/item-catalog.js';
import type { StoredItem } from '../../../src/store/rows.js';

function item(
  externalId: string,
  attributes: Record<string, unknown>,
  category: string | null = 'shoes',
): StoredItem {
  return {
    externalId,
    category,
    attributes,
    expiresAt: null,
    available: true,
    feedManaged: false,
    createdAt: 1_000,
    updatedAt: 2_000,
  };
}

describe('ItemCatalog', () => {
  it('keeps attributes as JSON text and gives them back as they were stored', () => {
    const catalog = new ItemCatalog();
    const stored = item('a', { name: 'A', price: 10, tags: ['x'], specs: { size: 42 } });
    catalog.upsert(stored);
    expect(catalog.get('a')).toEqual(stored);
    const id = catalog.idOf('a');
    expect(catalog.attributesOf(id)).toEqual(stored.attributes);
    // Each read is a copy: a caller changing it changes nothing held.
    catalog.attributesOf(id)!.name = 'changed';
    expect(catalog.attributesOf(id)!.name).toBe('A');
    expect(catalog.rawDocument(id)).toMatchObject({ externalId: 'a', attributes: { name: 'A' } });
  });

  it('takes items in their catalog form (a replica) exactly as from stored items', () => {
    const original = new ItemCatalog();
    const replica = new ItemCatalog();
    const items = [
      item('a', { price: 1 }),
      item('b', { price: 2, color: 'red' }, null),
      item('a', { price: 3 }),
    ];
    for (const stored of items) {
      original.upsert(stored);
      replica.upsertEntry(catalogItem(stored));
    }
    for (const externalId of ['a', 'b']) expect(replica.get(externalId)).toEqual(original.get(externalId));
    expect(Array.from(replica.attribute('price')!)).toEqual([3, 2]);
  });

  it('builds a column for a key items have, keeps it current, and none for a key no item ever had', () => {
    const catalog = new ItemCatalog();
    catalog.upsert(item('a', { price: 10 }));
    catalog.upsert(item('b', { price: 20, color: 'red' }));
    expect(catalog.attribute('material')).toBeUndefined();
    const price = catalog.attribute('price')!;
    expect(Array.from(price)).toEqual([10, 20]);

    catalog.upsert(item('a', { price: 15, material: 'wool' }));
    catalog.upsertEntry(catalogItem(item('c', { price: 30 })));
    expect(Array.from(catalog.attribute('price')!)).toEqual([15, 20, 30]);
    // A key first seen after the keys were listed is found.
    expect(Array.from(catalog.attribute('material')!)).toEqual(['wool', undefined, undefined]);
    expect(Array.from(catalog.attribute('color')!)).toEqual([undefined, 'red', undefined]);
    expect(catalog.cached.attributeColumns).toBe(3);
  });

  it("counts the characters of its renderings, and lets go of an item's text when the item changes", () => {
    const catalog = new ItemCatalog();
    catalog.upsert(item('a', { name: 'Alpha' }));
    catalog.upsert(item('b', { name: 'Beta' }));
    const render = (document: Readonly<Record<string, unknown>>) => JSON.stringify(document);
    const a = catalog.renderedDocument(0, 'full', render)!;
    const b = catalog.renderedDocument(1, 'full', render)!;
    expect(catalog.cached).toMatchObject({ rendered: 2, renderedCharacters: a.length + b.length });
    // Under another projection, the item's text is replaced.
    const lean = catalog.renderedDocument(0, 'lean', () => '{"itemId":"a"}')!;
    expect(catalog.cached.renderedCharacters).toBe(lean.length + b.length);
    catalog.upsert(item('b', { name: 'Beta, renamed' }));
    expect(catalog.cached).toMatchObject({ rendered: 1, renderedCharacters: lean.length });
    expect(catalog.renderedDocument(1, 'full', render)).toContain('Beta, renamed');
  });

  it('reads no attributes of a placeholder (an item known only from events)', () => {
    const catalog = new ItemCatalog();
    const id = catalog.ensureId('ghost');
    expect(catalog.attributesOf(id)).toBeUndefined();
    expect(catalog.document(id)).toBeUndefined();
    expect(catalog.attribute('price')).toBeUndefined();
  });
});
