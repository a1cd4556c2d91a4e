/**
 * Sorting of candidate entries (parallel id, score and fill arrays) by score, descending, without
 * allocating per call: the pipeline sorts a few hundred entries several times per request, and a
 * comparator-driven Array sort plus copies cost more than the rest of a stage. Scores are copied next to
 * entry indexes and sorted together, so comparisons read adjacent memory rather than through an index.
 */
let keys = new Float64Array(256);
let entries = new Int32Array(256);
let keysScratch = new Float64Array(256);
let entriesScratch = new Int32Array(256);
let idsCopy = new Int32Array(256);
let fillCopy = new Uint8Array(256);

function reserve(size: number): void {
  if (keys.length >= size) return;
  const capacity = Math.max(size, keys.length * 2);
  keys = new Float64Array(capacity);
  entries = new Int32Array(capacity);
  keysScratch = new Float64Array(capacity);
  entriesScratch = new Int32Array(capacity);
  idsCopy = new Int32Array(capacity);
  fillCopy = new Uint8Array(capacity);
}

/**
 * Stable merge sort of (keys, entries)[0..n), higher keys first; insertion sort for short runs. Equal keys
 * go by lower id when `ids` is given, else keep their order. The comparisons are written out in the loops:
 * through a helper taking an optional argument they cost half again as much.
 */
function sortKeys(n: number, ids?: Int32Array): void {
  const RUN = 8;
  const byId = ids !== undefined;
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n);
    for (let i = start + 1; i < end; i++) {
      const key = keys[i];
      const entry = entries[i];
      let j = i - 1;
      for (; j >= start; j--) {
        const other = keys[j];
        if (other > key || (other === key && (!byId || ids[entries[j]] < ids[entry]))) break;
        keys[j + 1] = other;
        entries[j + 1] = entries[j];
      }
      keys[j + 1] = key;
      entries[j + 1] = entry;
    }
  }
  let fromKeys = keys;
  let fromEntries = entries;
  let toKeys = keysScratch;
  let toEntries = entriesScratch;
  for (let width = RUN; width < n; width *= 2) {
    for (let left = 0; left < n; left += 2 * width) {
      const middle = Math.min(left + width, n);
      const right = Math.min(left + 2 * width, n);
      let i = left;
      let j = middle;
      let k = left;
      while (i < middle && j < right) {
        const keyI = fromKeys[i];
        const keyJ = fromKeys[j];
        if (keyJ > keyI || (keyJ === keyI && byId && ids[fromEntries[j]] < ids[fromEntries[i]])) {
          toKeys[k] = keyJ;
          toEntries[k++] = fromEntries[j++];
        } else {
          toKeys[k] = keyI;
          toEntries[k++] = fromEntries[i++];
        }
      }
      for (; i < middle; i++, k++) {
        toKeys[k] = fromKeys[i];
        toEntries[k] = fromEntries[i];
      }
      for (; j < right; j++, k++) {
        toKeys[k] = fromKeys[j];
        toEntries[k] = fromEntries[j];
      }
    }
    const keysWritten = toKeys;
    toKeys = fromKeys;
    fromKeys = keysWritten;
    const entriesWritten = toEntries;
    toEntries = fromEntries;
    fromEntries = entriesWritten;
  }
  if (fromKeys !== keys) {
    keys.set(fromKeys.subarray(0, n));
    entries.set(fromEntries.subarray(0, n));
  }
}

/** Sorts entries [from, to) in place; ties keep their order, or go by id when `tieById`. */
export function sortEntries(
  ids: Int32Array,
  scores: Float64Array,
  fill: Uint8Array,
  from: number,
  to: number,
  tieById: boolean,
): void {
  const n = to - from;
  if (n < 2) return;
  reserve(n);
  for (let i = 0; i < n; i++) {
    keys[i] = scores[from + i];
    entries[i] = from + i;
  }
  sortKeys(n, tieById ? ids : undefined);
  for (let i = 0; i < n; i++) {
    idsCopy[i] = ids[entries[i]];
    fillCopy[i] = fill[entries[i]];
  }
  for (let i = 0; i < n; i++) {
    ids[from + i] = idsCopy[i];
    scores[from + i] = keys[i];
    fill[from + i] = fillCopy[i];
  }
}
