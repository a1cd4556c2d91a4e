import { bindSelector, type ItemColumns, type Selector } from './columns.js';
import { documentPredicate, type DocumentPredicate } from './document.js';
import type { NextqlItem } from './keys.js';
import type { ConditionPlan, RunSubject } from './plan.js';
import { nowText, type EvaluationOptions, type RunValues } from './runtime.js';

interface BoundSelector {
  readonly version: number;
  readonly selector: Selector;
  readonly run: RunValues;
}

/** A planned condition with its two evaluation paths: per document, and over item columns. */
export class ConditionEvaluator {
  private readonly predicate: DocumentPredicate;
  /** Whether the expression reads now(): its answers then depend on the time of evaluation. */
  readonly usesNow: boolean;
  /** Which context functions it calls: its answers then depend on the request's seed item or user. */
  readonly usesContext: ContextUse;
  private readonly bound = new WeakMap<ItemColumns, BoundSelector>();

  constructor(private readonly plan: ConditionPlan) {
    this.predicate = documentPredicate(plan);
    this.usesNow = readsNow(plan);
    this.usesContext = { item: readsContext(plan, 'item'), user: readsContext(plan, 'user') };
  }

  matches(item: NextqlItem, options: EvaluationOptions | undefined): boolean {
    return this.predicate(item, { now: this.usesNow ? nowText(options) : '', context: options?.context });
  }

  /** Keeps, in place and in order, the ids of `selection[0..count)` the condition holds for; returns how many. */
  select(
    columns: ItemColumns,
    selection: Int32Array,
    count: number,
    options: EvaluationOptions | undefined,
  ): number {
    return this.selectorFor(columns, options).refine(selection, count);
  }

  /** Writes the ids of all items the condition holds for, ascending, into `into` (length >= size); returns how many. */
  selectAll(columns: ItemColumns, into: Int32Array, options: EvaluationOptions | undefined): number {
    return this.selectorFor(columns, options).scanAll(into);
  }

  /** Binding looks columns up and allocates scratch space, so it is redone only when the columns change. */
  private selectorFor(columns: ItemColumns, options: EvaluationOptions | undefined): Selector {
    let bound = this.bound.get(columns);
    if (bound === undefined || bound.version !== columns.version) {
      const run: RunValues = { now: '', context: undefined };
      bound = { version: columns.version, selector: bindSelector(this.plan, columns, run), run };
      this.bound.set(columns, bound);
    }
    if (this.usesNow) bound.run.now = nowText(options);
    bound.run.context = options?.context;
    return bound.selector;
  }
}

/** Copies the ids that are valid dense ids of `columns`, keeping their order. */
export function validIds(columns: ItemColumns, ids: Int32Array): { selection: Int32Array; count: number } {
  const selection = new Int32Array(ids.length);
  let count = 0;
  for (let index = 0; index < ids.length; index++) {
    const id = ids[index];
    if (id >= 0 && id < columns.size) selection[count++] = id;
  }
  return { selection, count };
}

/** Which of the context functions an expression calls. */
export interface ContextUse {
  readonly item: boolean;
  readonly user: boolean;
}

function readsNow(plan: ConditionPlan): boolean {
  return someSubject(plan, (subject) => subject.kind === 'now');
}

function readsContext(plan: ConditionPlan, scope: 'item' | 'user'): boolean {
  return someSubject(plan, (subject) => subject.kind === 'context' && subject.scope === scope);
}

/** Whether any run value the plan reads passes `test`. */
function someSubject(plan: ConditionPlan, test: (subject: RunSubject) => boolean): boolean {
  switch (plan.kind) {
    case 'and':
    case 'or':
      return plan.operands.some((operand) => someSubject(operand, test));
    case 'not':
      return someSubject(plan.operand, test);
    case 'test':
      return plan.subject.kind !== 'key' && test(plan.subject);
    case 'versus-run':
      return test(plan.value);
    case 'run-pair':
      return test(plan.left) || test(plan.right);
    default:
      return false;
  }
}
