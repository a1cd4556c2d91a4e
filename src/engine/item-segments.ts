import { itemDocument } from '../contract/catalog.js';
import type { Segmentation } from '../contract/scenarios.js';
import { compileSegmentation, type NextqlItem } from '../nextql/index.js';
import { walkPath } from '../nextql/keys.js';
import type { ItemCatalog } from '../state/item-catalog.js';
import type { StoredItem } from '../store/rows.js';

interface SegmentLists {
  catalog: ItemCatalog;
  catalogVersion: number;
  /** By dense item id, filled as items are asked for. */
  lists: (readonly string[] | undefined)[];
}

/**
 * Keyed by the stored segmentation object: a PUT stores a new object, so a replaced definition never
 * reads lists computed for the old one, and a deleted one's lists go with it.
 */
const cache = new WeakMap<Segmentation, SegmentLists>();

/**
 * The segments a catalog item belongs to, sorted and distinct (none for an id not in the catalog).
 * Lists are kept until the catalog changes, so balancing a result list and counting segments reuse them.
 */
export function segmentsOfItem(
  segmentation: Segmentation,
  catalog: ItemCatalog,
  id: number,
): readonly string[] {
  let entry = cache.get(segmentation);
  if (!entry || entry.catalog !== catalog || entry.catalogVersion !== catalog.version) {
    entry = { catalog, catalogVersion: catalog.version, lists: [] };
    cache.set(segmentation, entry);
  }
  return (entry.lists[id] ??= computeSegments(segmentation, catalog.document(id)));
}

function computeSegments(segmentation: Segmentation, item: StoredItem | undefined): readonly string[] {
  if (!item) return [];
  if (segmentation.type === 'auto-nextql') {
    return segmentation.expression === undefined
      ? []
      : compileSegmentation(segmentation.expression).segments(nextqlItem(item));
  }
  return segmentation.property === undefined ? [] : propertySegments(item, segmentation.property);
}

function nextqlItem(item: StoredItem): NextqlItem {
  return Object.assign({}, item, { createdAt: new Date(item.createdAt).toISOString() });
}

/**
 * `property` is a raw document path, as `GET /catalog/items` shows the item: a scalar is one segment,
 * an array one per scalar element; a missing value, null or an object is none.
 */
function propertySegments(item: StoredItem, property: string): readonly string[] {
  const value = walkPath(itemDocument(item), property.split('.'));
  const names = new Set<string>();
  for (const element of Array.isArray(value) ? value : [value]) {
    if (typeof element === 'string' || typeof element === 'number' || typeof element === 'boolean') {
      names.add(String(element));
    }
  }
  return [...names].sort();
}
