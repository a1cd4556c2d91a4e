import type { TopLevelField } from '../nextql/index.js';
import { itemDocument } from '../contract/catalog.js';
import type { StoredItem } from '../store/rows.js';
import { ensureCapacity } from './growable.js';
import { NameTable } from './name-table.js';

/** Bit 0 of `ItemCatalog.rankingCodes`: the item is in the catalog and available. */
export const SERVABLE = 1;

/** The category code held by a word of `ItemCatalog.rankingCodes`. */
export function categoryCodeOf(rankingCode: number): number {
  return rankingCode >>> 1;
}

/**
 * A tenant's items in memory, column by column, under dense integer ids. Ids are also given to items
 * that events mention before the catalog has them (inCatalog = 0), so histories can refer to them and
 * pick them up when they arrive. The recommendation pipeline reads these columns, never objects per item.
 */
export class ItemCatalog {
  private readonly ids = new Map<string, number>();
  private count = 0;
  private catalogCount = 0;
  readonly externalIds: string[] = [];
  readonly categories: (string | null)[] = [];
  readonly attributes: (Record<string, unknown> | undefined)[] = [];
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
  /** The API form of each item, built on first use: responses read it many times between changes. */
  private readonly rawDocuments: (Readonly<Record<string, unknown>> | undefined)[] = [];
  /** Each item's JSON under the projection last asked for (`renderedKeys`), built on first use. */
  private readonly renderedKeys: (string | undefined)[] = [];
  private readonly rendered: string[] = [];
  /** Keys no item had, with the version at which that was seen. */
  private readonly absentKeys = new Map<string, number>();
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

  /** What it keeps besides the stored items (README, "Memory"): items with their API form built and rendered, and attribute columns built. */
  get cached(): { documents: number; rendered: number; attributeColumns: number } {
    let documents = 0;
    let rendered = 0;
    for (let id = 0; id < this.count; id++) {
      if (this.rawDocuments[id] !== undefined) documents++;
      if (this.renderedKeys[id] !== undefined) rendered++;
    }
    return { documents, rendered, attributeColumns: this.attributeColumns.size };
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
    this.attributes.push(undefined);
    this.expiresAt.push(null);
    this.createdAtIso?.push(null);
    this.available.push(false);
    this.feedManaged.push(false);
    // Pushed rather than assigned on first use: an array written at scattered indexes turns into a slow
    // dictionary.
    this.rawDocuments.push(undefined);
    this.renderedKeys.push(undefined);
    this.rendered.push('');
    for (const column of this.attributeColumns.values()) column.push(undefined);
    return id;
  }

  get(externalId: string): StoredItem | undefined {
    const id = this.ids.get(externalId);
    return id === undefined ? undefined : this.document(id);
  }

  /** The stored document of a dense id, or undefined for a placeholder. */
  document(id: number): StoredItem | undefined {
    const attributes = this.attributes[id];
    if (!this.inCatalog[id] || attributes === undefined) return undefined;
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

  /** The stored item as the API shows it (shared: never mutate it), or undefined for a placeholder. */
  rawDocument(id: number): Readonly<Record<string, unknown>> | undefined {
    const cached = this.rawDocuments[id];
    if (cached) return cached;
    const item = this.document(id);
    if (!item) return undefined;
    return (this.rawDocuments[id] = itemDocument(item));
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
    const id = this.ensureId(item.externalId);
    if (!this.inCatalog[id]) this.catalogCount++;
    this.inCatalog[id] = 1;
    this.categories[id] = item.category;
    this.rankingCodes[id] = (this.categoryTable.codeOf(item.category) << 1) | (item.available ? SERVABLE : 0);
    this.attributes[id] = item.attributes;
    this.expiresAt[id] = item.expiresAt;
    this.available[id] = item.available;
    this.feedManaged[id] = item.feedManaged;
    this.createdAt[id] = item.createdAt;
    if (this.createdAtIso) this.createdAtIso[id] = new Date(item.createdAt).toISOString();
    this.updatedAt[id] = item.updatedAt;
    for (const [key, column] of this.attributeColumns) column[id] = item.attributes[key];
    this.rawDocuments[id] = undefined;
    this.renderedKeys[id] = undefined;
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
    let column = this.attributeColumns.get(key);
    if (!column) {
      if (this.absentKeys.get(key) === this.version) return undefined;
      column = new Array<unknown>(this.count);
      let present = false;
      for (let id = 0; id < this.count; id++) {
        const value = this.attributes[id]?.[key];
        column[id] = value;
        if (value !== undefined) present = true;
      }
      if (!present) {
        this.absentKeys.set(key, this.version);
        return undefined;
      }
      this.absentKeys.delete(key);
      this.attributeColumns.set(key, column);
    }
    return column;
  }
}
