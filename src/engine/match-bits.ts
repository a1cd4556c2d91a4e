import type { CompiledBooster, CompiledFilter } from '../nextql/index.js';
import type { ItemCatalog } from '../state/item-catalog.js';

/**
 * What a filter or booster said about each item, remembered until the catalog changes: serving asks the
 * same few expressions about the same popular items again and again. 0 = not asked yet, 1 = matches,
 * -1 = does not. An expression reading now() depends on the time, so it is evaluated every time.
 */
interface Remembered {
  catalog: ItemCatalog;
  version: number;
  bits: Int8Array;
}

const remembered = new WeakMap<CompiledFilter | CompiledBooster, Remembered>();
const READS_NOW = /\bnow\s*\(/;

let unknown = new Int32Array(256);
let ones = new Float64Array(256);

function bitsFor(expression: CompiledFilter | CompiledBooster, catalog: ItemCatalog): Int8Array {
  let entry = remembered.get(expression);
  if (!entry || entry.catalog !== catalog || entry.bits.length < catalog.size) {
    entry = { catalog, version: catalog.version, bits: new Int8Array(Math.max(catalog.size, 64) * 2) };
    remembered.set(expression, entry);
  } else if (entry.version !== catalog.version) {
    entry.bits.fill(0);
    entry.version = catalog.version;
  }
  return entry.bits;
}

/** Evaluates the ids not asked yet through `evaluate` (which marks them), then answers per position. */
function answer(
  bits: Int8Array,
  ids: Int32Array,
  evaluate: (asked: Int32Array) => void,
  into: (index: number, matches: boolean) => void,
): void {
  if (unknown.length < ids.length) unknown = new Int32Array(ids.length * 2);
  let count = 0;
  for (let i = 0; i < ids.length; i++) if (bits[ids[i]] === 0) unknown[count++] = ids[i];
  if (count > 0) evaluate(unknown.subarray(0, count));
  for (let i = 0; i < ids.length; i++) into(i, bits[ids[i]] === 1);
}

/** Calls `keep(index)` for each position of `ids` whose item the filter keeps. */
export function forEachKept(
  filter: CompiledFilter,
  catalog: ItemCatalog,
  ids: Int32Array,
  now: number,
  keep: (index: number, kept: boolean) => void,
): void {
  if (READS_NOW.test(filter.text)) {
    const kept = new Set(filter.filterIds(catalog, ids, { now }));
    for (let i = 0; i < ids.length; i++) keep(i, kept.has(ids[i]));
    return;
  }
  const bits = bitsFor(filter, catalog);
  answer(
    bits,
    ids,
    (asked) => {
      for (const id of asked) bits[id] = -1;
      for (const id of filter.filterIds(catalog, asked, { now })) bits[id] = 1;
    },
    keep,
  );
}

/** Multiplies scores[i] by the booster's factor for each ids[i] it applies to. */
export function applyBooster(
  booster: CompiledBooster,
  catalog: ItemCatalog,
  ids: Int32Array,
  scores: Float64Array,
  now: number,
): void {
  if (READS_NOW.test(booster.text)) {
    booster.applyToScores(catalog, ids, scores, { now });
    return;
  }
  const bits = bitsFor(booster, catalog);
  answer(
    bits,
    ids,
    (asked) => {
      if (ones.length < asked.length) ones = new Float64Array(asked.length * 2);
      const probe = ones.subarray(0, asked.length).fill(1);
      booster.applyToScores(catalog, asked, probe, { now });
      // factor > 0 and != 1 (a factor of 1 changes nothing either way).
      for (let i = 0; i < asked.length; i++) bits[asked[i]] = probe[i] !== 1 ? 1 : -1;
    },
    (index, matches) => {
      if (matches) scores[index] *= booster.factor;
    },
  );
}
