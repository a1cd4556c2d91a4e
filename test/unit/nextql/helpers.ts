import {
  TOP_LEVEL_FIELDS,
  type ItemColumns,
  type NextqlItem,
  type TopLevelField,
} from '../../../src/nextql/index.js';

/** Item columns built the way a serving state would: one array per field and per attribute key. */
export class ArrayColumns implements ItemColumns {
  readonly size: number;
  version = 1;
  private readonly fields = new Map<TopLevelField, unknown[]>();
  private readonly attributes = new Map<string, unknown[]>();

  constructor(items: readonly NextqlItem[]) {
    this.size = items.length;
    for (const name of TOP_LEVEL_FIELDS) {
      this.fields.set(
        name,
        items.map((item) => {
          const value = item[name];
          if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
          return value ?? null;
        }),
      );
    }
    items.forEach((item, id) => {
      for (const [key, value] of Object.entries(item.attributes ?? {})) {
        let column = this.attributes.get(key);
        if (column === undefined) {
          column = new Array<unknown>(items.length).fill(undefined);
          this.attributes.set(key, column);
        }
        column[id] = value;
      }
    });
  }

  field(name: TopLevelField): ArrayLike<unknown> {
    return this.fields.get(name) ?? [];
  }

  attribute(key: string): ArrayLike<unknown> | undefined {
    return this.attributes.get(key);
  }

  /** Replaces one attribute value and bumps the version, as a serving state does on upsert. */
  setAttribute(id: number, key: string, value: unknown): void {
    let column = this.attributes.get(key);
    if (column === undefined) {
      column = new Array<unknown>(this.size).fill(undefined);
      this.attributes.set(key, column);
    }
    column[id] = value;
    this.version++;
  }
}

export function allIds(size: number): Int32Array {
  return Int32Array.from({ length: size }, (_, id) => id);
}
