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
/** Per class, its size and then where its next entry goes, as `mergeClasses` lays the classes out in turn. */
const classStarts = new Int32Array(256);

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

/** Where each run of (keys, entries) begins, for the merge passes; a run's end is the next one's start. */
let runStarts = new Int32Array(64);

function reserveRuns(count: number): void {
  if (runStarts.length < count + 1) runStarts = new Int32Array(Math.max(count + 1, runStarts.length * 2));
}

/** Insertion-sorts (keys, entries)[start, end), higher keys first; ties as in `mergeRuns`. */
function insertionSort(start: number, end: number, ids: Int32Array | undefined): void {
  const byId = ids !== undefined;
  for (let i = start + 1; i < end; i++) {
    const key = keys[i];
    const entry = entries[i];
    let j = i - 1;
    for (; j >= start; j--) {
      const other = keys[j];
      if (other > key || (other === key && (byId ? ids[entries[j]] < ids[entry] : entries[j] < entry))) break;
      keys[j + 1] = other;
      entries[j + 1] = entries[j];
    }
    keys[j + 1] = key;
    entries[j + 1] = entry;
  }
}

/**
 * Merges the sorted runs of (keys, entries)[0..n) that begin at runStarts[0..runCount), pairwise, until one
 * is left. Higher keys first; equal keys go by lower id when `ids` is given, else by lower entry index,
 * which keeps a stable order whichever run an entry came from. The comparisons are written out in the
 * loop: through a helper taking an optional argument they cost half again as much.
 */
function mergeRuns(n: number, runCount: number, ids: Int32Array | undefined): void {
  const byId = ids !== undefined;
  let fromKeys = keys;
  let fromEntries = entries;
  let toKeys = keysScratch;
  let toEntries = entriesScratch;
  let runs = runCount;
  while (runs > 1) {
    let merged = 0;
    for (let run = 0; run < runs; run += 2) {
      const left = runStarts[run];
      const middle = run + 1 < runs ? runStarts[run + 1] : n;
      const right = run + 2 < runs ? runStarts[run + 2] : n;
      runStarts[merged++] = left;
      let i = left;
      let j = middle;
      let k = left;
      while (i < middle && j < right) {
        const keyI = fromKeys[i];
        const keyJ = fromKeys[j];
        const entryI = fromEntries[i];
        const entryJ = fromEntries[j];
        if (keyJ > keyI || (keyJ === keyI && (byId ? ids[entryJ] < ids[entryI] : entryJ < entryI))) {
          toKeys[k] = keyJ;
          toEntries[k++] = entryJ;
          j++;
        } else {
          toKeys[k] = keyI;
          toEntries[k++] = entryI;
          i++;
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
    runs = merged;
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

/** Copies (keys, entries)[0..n) back into the entries [from, from + n), in their new order. */
function writeBack(ids: Int32Array, scores: Float64Array, fill: Uint8Array, from: number, n: number): void {
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

/** Sorts entries [from, to) in place; ties keep their order, or go by id when `tieById`. */
export function sortEntries(
  ids: Int32Array,
  scores: Float64Array,
  fill: Uint8Array,
  from: number,
  to: number,
  tieById: boolean,
): void {
  const RUN = 8;
  const n = to - from;
  if (n < 2) return;
  reserve(n);
  for (let i = 0; i < n; i++) {
    keys[i] = scores[from + i];
    entries[i] = from + i;
  }
  const tieIds = tieById ? ids : undefined;
  const runCount = Math.ceil(n / RUN);
  reserveRuns(runCount);
  for (let run = 0; run < runCount; run++) {
    runStarts[run] = run * RUN;
    insertionSort(run * RUN, Math.min(n, (run + 1) * RUN), tieIds);
  }
  mergeRuns(n, runCount, tieIds);
  writeBack(ids, scores, fill, from, n);
}

/**
 * Stable sort of entries [0, n) that are already in order within each class (`classes[i]`, below
 * `classCount`), as a sorted pool is after boosters multiply each class of entries by the same factors:
 * the classes are merged, which reads each entry once per merge pass instead of sorting the whole.
 */
export function mergeClasses(
  ids: Int32Array,
  scores: Float64Array,
  fill: Uint8Array,
  n: number,
  classes: Uint8Array,
  classCount: number,
): void {
  if (n < 2) return;
  reserve(n);
  reserveRuns(classCount);
  classStarts.fill(0, 0, classCount);
  for (let i = 0; i < n; i++) classStarts[classes[i]]++;
  // Empty classes are dropped: a run is where a non-empty class begins.
  let runCount = 0;
  let start = 0;
  for (let c = 0; c < classCount; c++) {
    const size = classStarts[c];
    classStarts[c] = start;
    if (size > 0) runStarts[runCount++] = start;
    start += size;
  }
  for (let i = 0; i < n; i++) {
    const at = classStarts[classes[i]]++;
    keys[at] = scores[i];
    entries[at] = i;
  }
  mergeRuns(n, runCount, undefined);
  writeBack(ids, scores, fill, 0, n);
}

/**
 * The value that would be at index `n` of `values` sorted ascending (quickselect, reordering `values`):
 * `Float64Array.prototype.sort` of a small sample costs several times as much, through its comparator.
 */
export function nthSmallest(values: Float64Array, n: number): number {
  let low = 0;
  let high = values.length - 1;
  while (low < high) {
    const pivot = values[(low + high) >> 1];
    let i = low;
    let j = high;
    while (i <= j) {
      while (values[i] < pivot) i++;
      while (values[j] > pivot) j--;
      if (i <= j) {
        const value = values[i];
        values[i++] = values[j];
        values[j--] = value;
      }
    }
    if (n <= j) high = j;
    else if (n >= i) low = i;
    else return values[n];
  }
  return values[n];
}
