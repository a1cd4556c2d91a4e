import type {
  CompiledBooster,
  CompiledFilter,
  EvaluationContext,
  EvaluationOptions,
  ItemColumns,
} from '../nextql/index.js';
import type { ItemCatalog } from '../state/item-catalog.js';

/**
 * What a filter or booster said about each item, remembered until the catalog changes: serving asks the
 * same few expressions about the same popular items again and again. 0 = not asked yet, 1 = matches,
 * -1 = does not. An expression reading now() depends on the time, and one calling a context function on
 * the request (docs/guide.md, "Context in nextQL"), so those are evaluated every time.
 */
interface Remembered {
  catalog: ItemCatalog;
  version: number;
  bits: Int8Array;
}

type Expression = CompiledFilter | CompiledBooster;
type Select = (columns: ItemColumns, ids: Int32Array, options?: EvaluationOptions) => Int32Array;

const remembered = new WeakMap<Expression, Remembered>();
let unknown = new Int32Array(256);

function bitsFor(expression: Expression, catalog: ItemCatalog): Int8Array {
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

/** Calls `answer(index, matches)` for each position of `ids`, asking `select` only about new items. */
function eachAnswer(
  expression: Expression,
  select: Select,
  catalog: ItemCatalog,
  ids: Int32Array,
  now: number,
  answer: (index: number, matches: boolean) => void,
  context: EvaluationContext | undefined,
): void {
  const { readsContext } = expression;
  if (expression.readsNow || readsContext.item || readsContext.user) {
    const matching = new Set(select(catalog, ids, { now, context }));
    for (let i = 0; i < ids.length; i++) answer(i, matching.has(ids[i]));
    return;
  }
  const bits = bitsFor(expression, catalog);
  if (unknown.length < ids.length) unknown = new Int32Array(ids.length * 2);
  let count = 0;
  for (let i = 0; i < ids.length; i++) if (bits[ids[i]] === 0) unknown[count++] = ids[i];
  if (count > 0) {
    const asked = unknown.subarray(0, count);
    for (const id of asked) bits[id] = -1;
    for (const id of select(catalog, asked, { now })) bits[id] = 1;
  }
  for (let i = 0; i < ids.length; i++) answer(i, bits[ids[i]] === 1);
}

/** Calls `keep(index, kept)` for each position of `ids`: whether the filter keeps that item (in the request's `context`). */
export function forEachKept(
  filter: CompiledFilter,
  catalog: ItemCatalog,
  ids: Int32Array,
  now: number,
  keep: (index: number, kept: boolean) => void,
  context?: EvaluationContext,
): void {
  eachAnswer(filter, filter.filterIds, catalog, ids, now, keep, context);
}

/** Calls `matched(index)` for each position of `ids` whose item the booster applies to. */
export function forEachBoosted(
  booster: CompiledBooster,
  catalog: ItemCatalog,
  ids: Int32Array,
  now: number,
  matched: (index: number) => void,
  context?: EvaluationContext,
): void {
  eachAnswer(
    booster,
    booster.matchingIds,
    catalog,
    ids,
    now,
    (index, matches) => {
      if (matches) matched(index);
    },
    context,
  );
}
