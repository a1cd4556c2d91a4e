import type { Segmentation } from '../contract/scenarios.js';
import type { ItemCatalog } from '../state/item-catalog.js';
import { segmentsOfItem } from '../engine/item-segments.js';

export interface SegmentCount {
  name: string;
  itemCount: number;
}

/**
 * Items per segment over the whole catalog, available or not (availability is a serving matter, the
 * segments describe the catalog); largest first, then by name.
 */
export function countSegments(segmentation: Segmentation, catalog: ItemCatalog): SegmentCount[] {
  const counts = new Map<string, number>();
  for (let id = 0; id < catalog.size; id++) {
    if (!catalog.inCatalog[id]) continue;
    for (const name of segmentsOfItem(segmentation, catalog, id)) {
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  }
  return [...counts]
    .map(([name, itemCount]) => ({ name, itemCount }))
    .sort((a, b) => b.itemCount - a.itemCount || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
