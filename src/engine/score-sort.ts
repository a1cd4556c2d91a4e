/**
 * Sorting of candidate entries (parallel id, score and fill arrays) by score, descending, without
 * allocating per call: the pipeline sorts a few hundred entries several times per request, and a
 * comparator-driven Array sort plus copies cost more than the rest of a stage.
 */
let order = new Int32Array(256);
let scratch = new Int32Array(256);
let idsCopy = new Int32Array(256);
let scoresCopy = new Float64Array(256);
let fillCopy = new Uint8Array(256);

function reserve(size: number): void {
  if (order.length >= size) return;
  const capacity = Math.max(size, order.length * 2);
  order = new Int32Array(capacity);
  scratch = new Int32Array(capacity);
  idsCopy = new Int32Array(capacity);
  scoresCopy = new Float64Array(capacity);
  fillCopy = new Uint8Array(capacity);
}

/** Whether entry a goes before entry b: higher score first, then lower id or earlier position. */
function before(a: number, b: number, ids: Int32Array, scores: Float64Array, tieById: boolean): boolean {
  const sa = scores[a];
  const sb = scores[b];
  if (sa !== sb) return sa > sb;
  return tieById ? ids[a] < ids[b] : a < b;
}

/** Stable merge sort of order[0..n) (entry indexes); insertion sort for short runs. */
function sortOrder(n: number, ids: Int32Array, scores: Float64Array, tieById: boolean): void {
  const RUN = 16;
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n);
    for (let i = start + 1; i < end; i++) {
      const entry = order[i];
      let j = i - 1;
      while (j >= start && before(entry, order[j], ids, scores, tieById)) {
        order[j + 1] = order[j];
        j--;
      }
      order[j + 1] = entry;
    }
  }
  let source = order;
  let target = scratch;
  for (let width = RUN; width < n; width *= 2) {
    for (let left = 0; left < n; left += 2 * width) {
      const middle = Math.min(left + width, n);
      const right = Math.min(left + 2 * width, n);
      let i = left;
      let j = middle;
      let k = left;
      while (i < middle && j < right) {
        target[k++] = before(source[j], source[i], ids, scores, tieById) ? source[j++] : source[i++];
      }
      while (i < middle) target[k++] = source[i++];
      while (j < right) target[k++] = source[j++];
    }
    [source, target] = [target, source];
  }
  if (source !== order) for (let i = 0; i < n; i++) order[i] = source[i];
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
  for (let i = 0; i < n; i++) order[i] = from + i;
  sortOrder(n, ids, scores, tieById);
  for (let i = 0; i < n; i++) {
    const entry = order[i];
    idsCopy[i] = ids[entry];
    scoresCopy[i] = scores[entry];
    fillCopy[i] = fill[entry];
  }
  for (let i = 0; i < n; i++) {
    ids[from + i] = idsCopy[i];
    scores[from + i] = scoresCopy[i];
    fill[from + i] = fillCopy[i];
  }
}
