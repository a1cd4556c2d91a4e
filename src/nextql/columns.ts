import { instantOf } from './dates.js';
import { fieldValue, keyPlanId, walkPath, type KeyPlan, type TopLevelField } from './keys.js';
import type { ConditionPlan } from './plan.js';
import { runValue, type RunValues } from './runtime.js';
import { compareValues, type ConstantTest } from './values.js';

/** A tenant's items stored column-wise, addressed by dense ids 0..size-1. */
export interface ItemColumns {
  /** number of dense ids (0..size-1) */
  readonly size: number;
  /** values of a top-level stored field by dense id (createdAt/expiresAt as ISO 8601 strings, null when absent) */
  field(name: TopLevelField): ArrayLike<unknown>;
  /** values of one top-level attribute key by dense id (JSON values; undefined where the item lacks the key), or undefined when no item has the key */
  attribute(key: string): ArrayLike<unknown> | undefined;
  /** bumps whenever any column changes, so per-column derived data (parsed dates, etc.) can be cached */
  readonly version: number;
}

/**
 * A condition bound to item columns. Working on a shrinking selection of ids makes `and` a sequence of
 * tight loops over column arrays.
 */
export interface Selector {
  /** Keeps, in place and in order, the ids of `selection[0..count)` the condition holds for; returns how many. */
  refine(selection: Int32Array, count: number): number;
  /** Writes the ids of 0..size-1 the condition holds for, ascending, into `into` (length >= size); returns how many. */
  scanAll(into: Int32Array): number;
}

export function bindSelector(plan: ConditionPlan, columns: ItemColumns, run: RunValues): Selector {
  const size = columns.size;
  switch (plan.kind) {
    case 'constant':
      return plan.value ? refining(size, (_selection, count) => count) : keepNone;
    case 'and': {
      const [first, ...rest] = plan.operands.map((operand) => bindSelector(operand, columns, run));
      const refineRest = (selection: Int32Array, count: number): number => {
        let kept = count;
        for (let index = 0; index < rest.length && kept > 0; index++)
          kept = rest[index].refine(selection, kept);
        return kept;
      };
      return {
        refine: (selection, count) => refineRest(selection, first.refine(selection, count)),
        scanAll: (into) => refineRest(into, first.scanAll(into)),
      };
    }
    case 'or':
      return unionSelector(
        plan.operands.map((operand) => bindSelector(operand, columns, run)),
        size,
      );
    case 'not':
      return complementSelector(bindSelector(plan.operand, columns, run), size);
    case 'test': {
      if (plan.subject.kind !== 'key') {
        const { subject } = plan;
        const matches = plan.test.matches;
        return refining(size, (_selection, count) => (matches(runValue(subject, run)) ? count : 0));
      }
      const values = valueColumn(columns, plan.subject.key);
      if (values === undefined) return keepNone;
      const key = plan.subject.key;
      return testSelector(values, size, () => instantColumn(columns, key), plan.test);
    }
    case 'run-pair': {
      const { left, right, operator } = plan;
      return refining(size, (_selection, count) =>
        compareValues(operator, runValue(left, run), runValue(right, run)) ? count : 0,
      );
    }
    case 'versus-run': {
      const values = valueColumn(columns, plan.key);
      if (values === undefined) return keepNone;
      const { key, value, testFor } = plan;
      const instants = instantColumn(columns, key);
      const current = (): Selector =>
        testSelector(values, size, () => instants, testFor(runValue(value, run)));
      return {
        refine: (selection, count) => current().refine(selection, count),
        scanAll: (into) => current().scanAll(into),
      };
    }
    case 'key-pair': {
      const left = valueColumn(columns, plan.left);
      const right = valueColumn(columns, plan.right);
      if (left === undefined || right === undefined) return keepNone;
      const operator = plan.operator;
      return refining(size, (selection, count) => {
        let kept = 0;
        for (let index = 0; index < count; index++) {
          const id = selection[index];
          if (compareValues(operator, left[id], right[id])) selection[kept++] = id;
        }
        return kept;
      });
    }
  }
}

const keepNone: Selector = { refine: () => 0, scanAll: () => 0 };

/** A selector whose scan over all ids is a refinement of the full range. */
function refining(size: number, refine: Selector['refine']): Selector {
  return {
    refine,
    scanAll: (into) => {
      for (let id = 0; id < size; id++) into[id] = id;
      return refine(into, size);
    },
  };
}

function testSelector(
  values: ArrayLike<unknown>,
  size: number,
  instants: () => Float64Array,
  test: ConstantTest,
): Selector {
  const { matches, dates } = test;
  if (dates !== undefined) {
    const { onInstant, onOther } = dates;
    const parsed = instants();
    const holds = (id: number): boolean => {
      const instant = parsed[id];
      // NaN marks a value that is not a date string.
      return instant === instant ? onInstant(instant) : onOther(values[id]);
    };
    return {
      refine: (selection, count) => {
        let kept = 0;
        for (let index = 0; index < count; index++) {
          const id = selection[index];
          if (holds(id)) selection[kept++] = id;
        }
        return kept;
      },
      scanAll: (into) => {
        let kept = 0;
        for (let id = 0; id < size; id++) if (holds(id)) into[kept++] = id;
        return kept;
      },
    };
  }
  return {
    refine: (selection, count) => {
      let kept = 0;
      for (let index = 0; index < count; index++) {
        const id = selection[index];
        if (matches(values[id])) selection[kept++] = id;
      }
      return kept;
    },
    scanAll: (into) => {
      let kept = 0;
      for (let id = 0; id < size; id++) if (matches(values[id])) into[kept++] = id;
      return kept;
    },
  };
}

/**
 * Each operand only sees the ids no earlier operand kept; `marks` (one byte per dense id) records the
 * kept ids so that the selection can be compacted in its original order.
 */
function unionSelector(operands: readonly Selector[], size: number): Selector {
  const marks = new Uint8Array(size);
  let pending = new Int32Array(0);
  let scratch = new Int32Array(0);
  return refining(size, (selection, count) => {
    if (pending.length < count) {
      pending = new Int32Array(count);
      scratch = new Int32Array(count);
    }
    pending.set(selection.subarray(0, count));
    let pendingCount = count;
    for (let operand = 0; operand < operands.length && pendingCount > 0; operand++) {
      scratch.set(pending.subarray(0, pendingCount));
      const kept = operands[operand].refine(scratch, pendingCount);
      for (let index = 0; index < kept; index++) marks[scratch[index]] = 1;
      let remaining = 0;
      for (let index = 0; index < pendingCount; index++) {
        const id = pending[index];
        if (marks[id] === 0) pending[remaining++] = id;
      }
      pendingCount = remaining;
    }
    return compactMarked(selection, count, marks, 1);
  });
}

function complementSelector(operand: Selector, size: number): Selector {
  const marks = new Uint8Array(size);
  let scratch = new Int32Array(0);
  return refining(size, (selection, count) => {
    if (scratch.length < count) scratch = new Int32Array(count);
    scratch.set(selection.subarray(0, count));
    const kept = operand.refine(scratch, count);
    for (let index = 0; index < kept; index++) marks[scratch[index]] = 1;
    const remaining = compactMarked(selection, count, marks, 0);
    for (let index = 0; index < kept; index++) marks[scratch[index]] = 0;
    return remaining;
  });
}

/** Keeps the ids whose mark equals `wanted`, then clears the marks of the kept ids when `wanted` is 1. */
function compactMarked(selection: Int32Array, count: number, marks: Uint8Array, wanted: 0 | 1): number {
  let kept = 0;
  for (let index = 0; index < count; index++) {
    const id = selection[index];
    if (marks[id] === wanted) selection[kept++] = id;
  }
  if (wanted === 1) for (let index = 0; index < kept; index++) marks[selection[index]] = 0;
  return kept;
}

interface DerivedData {
  readonly version: number;
  readonly byName: Map<string, unknown>;
}

const derivedByColumns = new WeakMap<ItemColumns, DerivedData>();

/** Derived per-key arrays live as long as the columns' version does not change. */
function derived<T>(columns: ItemColumns, name: string, build: () => T): T {
  let data = derivedByColumns.get(columns);
  if (data === undefined || data.version !== columns.version) {
    data = { version: columns.version, byName: new Map() };
    derivedByColumns.set(columns, data);
  }
  if (data.byName.has(name)) return data.byName.get(name) as T;
  const value = build();
  data.byName.set(name, value);
  return value;
}

/**
 * The values a key reads, by dense id (`undefined` = missing), or undefined when no item can have it.
 * An attribute without a path is the stored column itself; anything else is derived once per version.
 */
export function valueColumn(columns: ItemColumns, key: KeyPlan): ArrayLike<unknown> | undefined {
  if (key.source === 'attribute') {
    const stored = columns.attribute(key.name);
    if (stored === undefined || key.path.length === 0) return stored;
    return derived(columns, `value:${keyPlanId(key)}`, () =>
      mapColumn(stored, columns.size, (value) => walkPath(value, key.path)),
    );
  }
  return derived(columns, `value:${keyPlanId(key)}`, () =>
    mapColumn(columns.field(key.field), columns.size, (value) => walkPath(fieldValue(value), key.path)),
  );
}

/** Pre-parsed RFC 3339 instants of a key's values (NaN where the value is not a date string). */
function instantColumn(columns: ItemColumns, key: KeyPlan): Float64Array {
  return derived(columns, `instant:${keyPlanId(key)}`, () => {
    const values = valueColumn(columns, key);
    const instants = new Float64Array(columns.size).fill(NaN);
    if (values === undefined) return instants;
    for (let id = 0; id < columns.size; id++) {
      const value = values[id];
      if (typeof value === 'string') instants[id] = instantOf(value);
    }
    return instants;
  });
}

function mapColumn(values: ArrayLike<unknown>, size: number, map: (value: unknown) => unknown): unknown[] {
  const mapped = new Array<unknown>(size);
  for (let id = 0; id < size; id++) mapped[id] = map(values[id]);
  return mapped;
}
