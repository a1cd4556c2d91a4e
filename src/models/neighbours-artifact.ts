import { ArtifactError } from '../artifacts/errors.js';
import type { NeighbourLists } from '../artifacts/formats.js';
import { sharedArray } from '../linalg/growable.js';
import { toHalf } from '../state/half-float.js';
import { ItemNeighbours } from '../state/item-neighbours.js';
import type { CatalogIds } from '../state/factor-model.js';

/**
 * An item-neighbour artifact in the serving state's dense ids. Items the catalog does not know (removed
 * since the build) are left out as sources and as neighbours; a model none of whose items the catalog
 * knows belongs to no catalog of this tenant and is refused. The lists are written straight into shared
 * memory, weights in half precision, as the serving state keeps them: a loader hands them on to the
 * threads as they are, without a copy of millions of entries (docs/batch-models.md).
 */
export function servingNeighbours(
  lists: NeighbourLists,
  catalog: CatalogIds,
  interactionCount: number,
  builtAt: number,
): ItemNeighbours {
  const dense = new Int32Array(lists.items.length);
  let known = 0;
  for (let i = 0; i < lists.items.length; i++) {
    dense[i] = catalog.idOf(lists.items[i]);
    if (dense[i] >= 0) known++;
  }
  if (known === 0 && lists.items.length > 0)
    throw new ArtifactError("none of the model's items is in the tenant's catalog");
  const size = catalog.size;
  const offsets = sharedArray(Int32Array, size + 1);
  for (let i = 0; i < lists.items.length; i++) {
    if (dense[i] < 0) continue;
    for (let k = lists.offsets[i]; k < lists.offsets[i + 1]; k++) {
      if (dense[lists.neighbours[k]] >= 0) offsets[dense[i] + 1]++;
    }
  }
  for (let id = 0; id < size; id++) offsets[id + 1] += offsets[id];
  const neighbours = sharedArray(Int32Array, offsets[size]);
  const weights = sharedArray(Uint16Array, offsets[size]);
  const next = offsets.slice(0, size);
  for (let i = 0; i < lists.items.length; i++) {
    if (dense[i] < 0) continue;
    for (let k = lists.offsets[i]; k < lists.offsets[i + 1]; k++) {
      const neighbour = dense[lists.neighbours[k]];
      if (neighbour < 0) continue;
      neighbours[next[dense[i]]] = neighbour;
      weights[next[dense[i]]++] = toHalf(lists.weights[k]);
    }
  }
  return new ItemNeighbours(offsets, neighbours, weights, interactionCount, builtAt);
}
