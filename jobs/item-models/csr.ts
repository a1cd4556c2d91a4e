/** Neighbour lists: list i is neighbours[offsets[i] .. offsets[i + 1]) with its weights. */
export interface CsrLists {
  offsets: Int32Array;
  neighbours: Int32Array;
  weights: Float32Array;
}

/** Lists kept by target (list j: sources i with weight w(i → j)) turned into lists by source, best first. */
export function transposeLists(lists: CsrLists): CsrLists {
  const items = lists.offsets.length - 1;
  const offsets = new Int32Array(items + 1);
  for (let k = 0; k < lists.neighbours.length; k++) offsets[lists.neighbours[k] + 1]++;
  for (let i = 0; i < items; i++) offsets[i + 1] += offsets[i];
  const next = offsets.slice(0, items);
  const neighbours = new Int32Array(lists.neighbours.length);
  const weights = new Float32Array(lists.weights.length);
  for (let target = 0; target < items; target++) {
    for (let k = lists.offsets[target]; k < lists.offsets[target + 1]; k++) {
      const at = next[lists.neighbours[k]]++;
      neighbours[at] = target;
      weights[at] = lists.weights[k];
    }
  }
  // Best first within each source's list.
  for (let i = 0; i < items; i++) {
    const order = Array.from({ length: offsets[i + 1] - offsets[i] }, (_, k) => offsets[i] + k);
    order.sort((a, b) => weights[b] - weights[a] || neighbours[a] - neighbours[b]);
    const sortedNeighbours = order.map((k) => neighbours[k]);
    const sortedWeights = order.map((k) => weights[k]);
    neighbours.set(sortedNeighbours, offsets[i]);
    weights.set(sortedWeights, offsets[i]);
  }
  return { offsets, neighbours, weights };
}

/**
 * The lists with only their `share` of entries of largest magnitude over the whole model (ties at the
 * threshold kept): the small weights of long lists cost a request additions and move few scores.
 */
export function keepLargest(lists: CsrLists, share: number): CsrLists {
  if (!(share > 0 && share <= 1))
    throw new RangeError(`the share of weights kept must be in (0, 1] (${share})`);
  const total = lists.weights.length;
  if (Math.ceil(total * share) >= total) return lists;
  const magnitudes = Float32Array.from(lists.weights, Math.abs).sort();
  // The entries at or above the threshold, ties included: the kept length, known before copying.
  let first = total - Math.ceil(total * share);
  const threshold = magnitudes[first];
  while (first > 0 && magnitudes[first - 1] === threshold) first--;
  const items = lists.offsets.length - 1;
  const offsets = new Int32Array(items + 1);
  const neighbours = new Int32Array(total - first);
  const weights = new Float32Array(total - first);
  let length = 0;
  for (let i = 0; i < items; i++) {
    for (let k = lists.offsets[i]; k < lists.offsets[i + 1]; k++) {
      if (Math.abs(lists.weights[k]) < threshold) continue;
      neighbours[length] = lists.neighbours[k];
      weights[length++] = lists.weights[k];
    }
    offsets[i + 1] = length;
  }
  return { offsets, neighbours, weights };
}
