import type { TopLevelField } from '../nextql/index.js';
import { itemDocument } from '../contract/catalog.js';
import type { CatalogItem } from '../store/row-mapping.js';
import type { StoredItem } from '../store/rows.js';
import { ensureCapacity } from '../linalg/growable.js';
import { NameTable } from './name-table.js';

/** Bit 0 of `ItemCatalog.rankingCodes`: the item is in the catalog and available. */
export const SERVABLE = 1;

/** The category code held by a word of `ItemCatalog.rankingCodes`. */
export function categoryCodeOf(rankingCode: number): number {
  return rankingCode >>> 1;
}

export type { CatalogItem };

/** The catalog form of a stored item. */
export function catalogItem(item: StoredItem): CatalogItem {
  return Object.assign({}, item, {
    attributes: JSON.stringify(item.attributes),
  } satisfies Pick<CatalogItem, 'attributes'>);
}

function parseAttributes(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * A tenant's items in memory, column by column, under dense integer ids. Ids are also given to items
 * that events mention before the catalog has them (inCatalog = 0), so histories can refer to them and
 * pick them up when they arrive. The recommendation pipeline reads these columns, never objects per item:
 * attributes are kept as text, and a key a filter reads becomes a column of its own (`attribute`).
 */
export class ItemCatalog {
  private readonly ids = new Map<string, number>();
  private count = 0;
  private catalogCount = 0;
  readonly externalIds: string[] = [];
  /** Each item's category, the one string `categoryTable` holds for it. */
  readonly categories: (string | null)[] = [];
  /** Each item's attributes as JSON text (`attributesOf` reads them). */
  private readonly attributeTexts: (string | undefined)[] = [];
  readonly expiresAt: (string | null)[] = [];
  readonly available: boolean[] = [];
  readonly feedManaged: boolean[] = [];
  /**
   * What ranking reads of every candidate, one word per item so that a candidate costs one memory access
   * rather than one per column: the item's category as a code of `categoryTable` (0: none), for
   * per-category counting without string keys, shifted left by one; bit 0 (SERVABLE) is set while the
   * item is in the catalog and available.
   */
  rankingCodes = new Int32Array(16);
  readonly categoryTable = new NameTable();
  createdAt = new Float64Array(16);
  updatedAt = new Float64Array(16);
  inCatalog = new Uint8Array(16);
  /** Bumps on every change, so derived per-column data can be cached against it. */
  version = 0;
  private readonly attributeColumns = new Map<string, unknown[]>();
  /**
   * Every top-level attribute key any item had, found the first time a filter asks for a key no column
   * holds and then kept current, so a key no item has costs no scan of the items.
   */
  private attributeKeys: Set<string> | undefined;
  /** Each item's JSON under the projection last asked for (`renderedKeys`), built on first use. */
  private readonly renderedKeys: (string | undefined)[] = [];
  private readonly rendered: string[] = [];
  /**
   * `createdAt` as the ISO text nextQL compares, built the first time a filter names it and then kept
   * current: 40 bytes an item that most tenants never ask for.
   */
  private createdAtIso: (string | null)[] | undefined;

  /** Dense ids in use (catalog items and items only known from events). */
  get size(): number {
    return this.count;
  }

  /** Items stored in the catalog. */
  get itemCount(): number {
    return this.catalogCount;
  }

  /**
   * What it keeps besides the stored items (docs/memory.md): items rendered and their characters,
   * attribute columns built.
   */
  get cached(): { rendered: number; renderedCharacters: number; attributeColumns: number } {
    let rendered = 0;
    let renderedCharacters = 0;
    for (let id = 0; id < this.count; id++) {
      if (this.renderedKeys[id] === undefined) continue;
      rendered++;
      renderedCharacters += this.rendered[id].length;
    }
    return { rendered, renderedCharacters, attributeColumns: this.attributeColumns.size };
  }

  /** Bytes of its typed columns. */
  get columnBytes(): number {
    return (
      this.rankingCodes.byteLength +
      this.createdAt.byteLength +
      this.updatedAt.byteLength +
      this.inCatalog.byteLength
    );
  }

  idOf(externalId: string): number {
    return this.ids.get(externalId) ?? -1;
  }

  /** Whether the catalog holds the item (not only events naming it). */
  holds(externalId: string): boolean {
    const id = this.ids.get(externalId);
    return id !== undefined && this.inCatalog[id] === 1;
  }

  /** The dense id of an item, creating a placeholder for an item not yet in the catalog. */
  ensureId(externalId: string): number {
    const known = this.ids.get(externalId);
    if (known !== undefined) return known;
    const id = this.count++;
    this.ids.set(externalId, id);
    this.createdAt = ensureCapacity(this.createdAt, this.count, Float64Array);
    this.updatedAt = ensureCapacity(this.updatedAt, this.count, Float64Array);
    this.inCatalog = ensureCapacity(this.inCatalog, this.count, Uint8Array);
    this.rankingCodes = ensureCapacity(this.rankingCodes, this.count, Int32Array);
    this.externalIds.push(externalId);
    this.categories.push(null);
    this.attributeTexts.push(undefined);
    this.expiresAt.push(null);
    this.createdAtIso?.push(null);
    this.available.push(false);
    this.feedManaged.push(false);
    // Pushed rather than assigned on first use: an array written at scattered indexes turns into a slow
    // dictionary.
    this.renderedKeys.push(undefined);
    this.rendered.push('');
    for (const column of this.attributeColumns.values()) column.push(undefined);
    return id;
  }

  get(externalId: string): StoredItem | undefined {
    const id = this.ids.get(externalId);
    return id === undefined ? undefined : this.document(id);
  }

  /** The attributes of a dense id, parsed anew on every call; undefined for a placeholder. */
  attributesOf(id: number): Record<string, unknown> | undefined {
    const text = this.attributeTexts[id];
    return this.inCatalog[id] && text !== undefined ? parseAttributes(text) : undefined;
  }

  /** The stored document of a dense id, or undefined for a placeholder. */
  document(id: number): StoredItem | undefined {
    const attributes = this.attributesOf(id);
    if (attributes === undefined) return undefined;
    return {
      externalId: this.externalIds[id],
      category: this.categories[id],
      attributes,
      expiresAt: this.expiresAt[id],
      available: this.available[id],
      feedManaged: this.feedManaged[id],
      createdAt: this.createdAt[id],
      updatedAt: this.updatedAt[id],
    };
  }

  /**
   * The stored item as the API shows it, or undefined for a placeholder. Built on every call, not kept:
   * what responses need again and again is its rendering (`renderedDocument`).
   */
  rawDocument(id: number): Readonly<Record<string, unknown>> | undefined {
    const item = this.document(id);
    return item && itemDocument(item);
  }

  /**
   * The item's raw document rendered by `render`, which must depend on nothing but the document and `key`;
   * remembered until the item changes or another key is asked for, since responses render the same items
   * under the same projection again and again. Undefined for a placeholder.
   */
  renderedDocument(
    id: number,
    key: string,
    render: (document: Readonly<Record<string, unknown>>) => string,
  ): string | undefined {
    if (this.renderedKeys[id] === key) return this.rendered[id];
    const document = this.rawDocument(id);
    if (!document) return undefined;
    this.renderedKeys[id] = key;
    return (this.rendered[id] = render(document));
  }

  upsert(item: StoredItem): number {
    return this.upsertEntry(catalogItem(item), item.attributes);
  }

  /** @param attributes the item's attributes parsed, when the caller has them */
  upsertEntry(item: CatalogItem, attributes?: Record<string, unknown>): number {
    const id = this.ensureId(item.externalId);
    if (!this.inCatalog[id]) this.catalogCount++;
    this.inCatalog[id] = 1;
    const category = this.categoryTable.codeOf(item.category);
    this.categories[id] = this.categoryTable.nameOf(category);
    this.rankingCodes[id] = (category << 1) | (item.available ? SERVABLE : 0);
    this.attributeTexts[id] = item.attributes;
    this.expiresAt[id] = item.expiresAt;
    this.available[id] = item.available;
    this.feedManaged[id] = item.feedManaged;
    this.createdAt[id] = item.createdAt;
    if (this.createdAtIso) this.createdAtIso[id] = new Date(item.createdAt).toISOString();
    this.updatedAt[id] = item.updatedAt;
    if (this.attributeColumns.size > 0 || this.attributeKeys) {
      const parsed = attributes ?? parseAttributes(item.attributes);
      for (const [key, column] of this.attributeColumns) column[id] = parsed[key];
      if (this.attributeKeys) for (const key of Object.keys(parsed)) this.attributeKeys.add(key);
    }
    // The item's text goes at once, not at its next rendering.
    this.renderedKeys[id] = undefined;
    this.rendered[id] = '';
    this.version++;
    return id;
  }

  /**
   * Takes an item out of the catalog for good (a deleted item: docs/guide.md, "Deleting items"): its
   * document and its id go, and its dense id stays behind, naming nothing, so that the histories and
   * models that still hold the number find no item there. An item of the same id upserted later gets a
   * new dense id. Returns the dense id it had, or -1 when the catalog never knew it.
   */
  remove(externalId: string): number {
    const id = this.ids.get(externalId);
    if (id === undefined) return -1;
    this.ids.delete(externalId);
    if (this.inCatalog[id]) this.catalogCount--;
    this.inCatalog[id] = 0;
    this.rankingCodes[id] = 0;
    this.externalIds[id] = '';
    this.categories[id] = null;
    this.attributeTexts[id] = undefined;
    this.expiresAt[id] = null;
    if (this.createdAtIso) this.createdAtIso[id] = null;
    this.available[id] = false;
    this.feedManaged[id] = false;
    for (const column of this.attributeColumns.values()) column[id] = undefined;
    this.renderedKeys[id] = undefined;
    this.rendered[id] = '';
    this.version++;
    return id;
  }

  field(name: TopLevelField): ArrayLike<unknown> {
    switch (name) {
      case 'externalId':
        return this.externalIds;
      case 'category':
        return this.categories;
      case 'available':
        return this.available;
      case 'feedManaged':
        return this.feedManaged;
      case 'createdAt':
        return (this.createdAtIso ??= Array.from({ length: this.count }, (_, id) =>
          this.inCatalog[id] ? new Date(this.createdAt[id]).toISOString() : null,
        ));
      case 'expiresAt':
        return this.expiresAt;
    }
  }

  /**
   * The values of one top-level attribute key by dense id. Built on first use and then kept current by
   * upsert, so a filter pays for a column once rather than per request.
   */
  attribute(key: string): ArrayLike<unknown> | undefined {
    const built = this.attributeColumns.get(key);
    if (built) return built;
    if (this.attributeKeys && !this.attributeKeys.has(key)) return undefined;
    // One parse of every item, for the column and, the first time, for the keys the items have.
    const keys = this.attributeKeys ?? new Set<string>();
    const column = new Array<unknown>(this.count);
    for (let id = 0; id < this.count; id++) {
      const attributes = this.attributesOf(id);
      column[id] = attributes?.[key];
      if (attributes && !this.attributeKeys) for (const name in attributes) keys.add(name);
    }
    this.attributeKeys = keys;
    if (!keys.has(key)) return undefined;
    this.attributeColumns.set(key, column);
    return column;
  }
}
