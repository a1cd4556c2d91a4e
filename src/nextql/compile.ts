import type { Booster, Condition } from './ast.js';
import { BoundedCache } from './cache.js';
import type { ItemColumns } from './columns.js';
import { ConditionEvaluator, validIds, type ContextUse } from './condition.js';
import type { NextqlItem } from './keys.js';
import { parseBooster, parseFilter } from './parse.js';
import { planCondition } from './plan.js';
import type { EvaluationOptions } from './runtime.js';

export interface CompiledFilter {
  readonly text: string;
  readonly ast: Condition;
  /** Whether it reads now(), so that its answers may change with time alone. */
  readonly readsNow: boolean;
  /** Which context functions it calls, so that its answers may change with the request's seed item or user. */
  readonly readsContext: ContextUse;
  /** Whether the filter keeps this item. */
  matches(item: NextqlItem, options?: EvaluationOptions): boolean;
  /** The ids the filter keeps, in their input order; ids outside 0..size-1 are dropped. */
  filterIds(columns: ItemColumns, ids: Int32Array, options?: EvaluationOptions): Int32Array;
  /** One byte per dense id: 1 where the filter keeps the item. */
  filterAll(columns: ItemColumns, options?: EvaluationOptions): Uint8Array;
}

export interface CompiledBooster {
  readonly text: string;
  readonly ast: Booster;
  readonly factor: number;
  /** Whether it reads now(), so that its answers may change with time alone. */
  readonly readsNow: boolean;
  /** Which context functions it calls, so that its answers may change with the request's seed item or user. */
  readonly readsContext: ContextUse;
  /** The ids it applies to, in their input order; ids outside 0..size-1 are dropped. */
  matchingIds(columns: ItemColumns, ids: Int32Array, options?: EvaluationOptions): Int32Array;
  /** Whether the booster applies to this item. */
  matches(item: NextqlItem, options?: EvaluationOptions): boolean;
  /** `factor` when the booster applies to the item, else 1. */
  factorFor(item: NextqlItem, options?: EvaluationOptions): number;
  /** Multiplies, in place, `scores[i]` by the factor for each `ids[i]` the booster applies to. */
  applyToScores(
    columns: ItemColumns,
    ids: Int32Array,
    scores: Float32Array | Float64Array,
    options?: EvaluationOptions,
  ): void;
}

const CACHE_CAPACITY = 1000;
const filters = new BoundedCache<CompiledFilter>(CACHE_CAPACITY);
const boosters = new BoundedCache<CompiledBooster>(CACHE_CAPACITY);

/** Compiles once per distinct text; throws NextqlError for an invalid filter. */
export function compileFilter(text: string): CompiledFilter {
  return filters.getOrCreate(text, () => createFilter(text));
}

/** Compiles once per distinct text; throws NextqlError for an invalid booster. */
export function compileBooster(text: string): CompiledBooster {
  return boosters.getOrCreate(text, () => createBooster(text));
}

function createFilter(text: string): CompiledFilter {
  const ast = parseFilter(text);
  const condition = new ConditionEvaluator(planCondition(ast));
  return {
    text,
    ast,
    readsNow: condition.usesNow,
    readsContext: condition.usesContext,
    matches: (item, options) => condition.matches(item, options),
    filterIds: (columns, ids, options) => selectIds(condition, columns, ids, options),
    filterAll: (columns, options) => {
      const selection = new Int32Array(columns.size);
      const kept = condition.selectAll(columns, selection, options);
      const mask = new Uint8Array(columns.size);
      for (let index = 0; index < kept; index++) mask[selection[index]] = 1;
      return mask;
    },
  };
}

function selectIds(
  condition: ConditionEvaluator,
  columns: ItemColumns,
  ids: Int32Array,
  options: EvaluationOptions | undefined,
): Int32Array {
  const { selection, count } = validIds(columns, ids);
  return selection.slice(0, condition.select(columns, selection, count, options));
}

function createBooster(text: string): CompiledBooster {
  const ast = parseBooster(text);
  const factor = ast.factor.value as number;
  const condition = new ConditionEvaluator(planCondition(ast.condition));
  return {
    text,
    ast,
    factor,
    readsNow: condition.usesNow,
    readsContext: condition.usesContext,
    matches: (item, options) => condition.matches(item, options),
    matchingIds: (columns, ids, options) => selectIds(condition, columns, ids, options),
    factorFor: (item, options) => (condition.matches(item, options) ? factor : 1),
    applyToScores: (columns, ids, scores, options) => {
      const { selection, count } = validIds(columns, ids);
      const kept = condition.select(columns, selection, count, options);
      // The kept ids are a subsequence of `ids` in the same order, so one forward walk pairs them up.
      let next = 0;
      for (let index = 0; index < ids.length && next < kept; index++) {
        if (ids[index] === selection[next]) {
          scores[index] *= factor;
          next++;
        }
      }
    },
  };
}
