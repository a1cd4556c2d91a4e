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
 * Whether (score a, entry a) goes before (score b, entry b): higher score first; on equal scores lower
 * id (`ids` given) or else earlier entry.
 */
function before(scoreA: number, entryA: number, scoreB: number, entryB: number, ids?: Int32Array): boolean {
  if (scoreA !== scoreB) return scoreA > scoreB;
  return ids ? ids[entryA] < ids[entryB] : entryA < entryB;
}

/** Stable merge sort of (keys, entries)[0..n); insertion sort for short runs. */
function sortKeys(n: number, ids?: Int32Array): void {
  const RUN = 16;
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n);
    for (let i = start + 1; i < end; i++) {
      const key = keys[i];
      const entry = entries[i];
      let j = i - 1;
      while (j >= start && before(key, entry, keys[j], entries[j], ids)) {
        keys[j + 1] = keys[j];
        entries[j + 1] = entries[j];
        j--;
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
        const takeRight = before(fromKeys[j], fromEntries[j], fromKeys[i], fromEntries[i], ids);
        const from = takeRight ? j++ : i++;
        toKeys[k] = fromKeys[from];
        toEntries[k++] = fromEntries[from];
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
    [fromKeys, toKeys] = [toKeys, fromKeys];
    [fromEntries, toEntries] = [toEntries, fromEntries];
  }
  if (fromKeys !== keys) {
    for (let i = 0; i < n; i++) {
      keys[i] = fromKeys[i];
      entries[i] = fromEntries[i];
    }
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
