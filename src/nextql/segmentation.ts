import type { LiteralValue, SetExpression, ValueExpression } from './ast.js';
import { BoundedCache } from './cache.js';
import { ConditionEvaluator } from './condition.js';
import { planKey, readKey, type NextqlItem } from './keys.js';
import { parseSegmentation } from './parse.js';
import { planCondition } from './plan.js';
import type { EvaluationOptions } from './runtime.js';

export interface CompiledSegmentation {
  readonly text: string;
  readonly ast: SetExpression;
  /** The item's segment names, sorted. */
  segments(item: NextqlItem, options?: EvaluationOptions): string[];
}

/** Adds segment names to `into`; `bound` is the value of the enclosing lambda's variable. */
type SetEmitter = (
  item: NextqlItem,
  options: EvaluationOptions | undefined,
  into: Set<string>,
  bound?: string,
) => void;

const segmentations = new BoundedCache<CompiledSegmentation>(1000);

/** Compiles once per distinct text; throws NextqlError for an invalid expression. */
export function compileSegmentation(text: string): CompiledSegmentation {
  return segmentations.getOrCreate(text, () => {
    const ast = parseSegmentation(text);
    const emit = setEmitter(ast);
    return {
      text,
      ast,
      segments: (item, options) => {
        const names = new Set<string>();
        emit(item, options, names);
        return [...names].sort();
      },
    };
  });
}

function setEmitter(expression: SetExpression): SetEmitter {
  switch (expression.kind) {
    case 'union': {
      const terms = expression.terms.map(setEmitter);
      return (item, options, into, bound) => {
        for (const term of terms) term(item, options, into, bound);
      };
    }
    case 'if': {
      const condition = new ConditionEvaluator(planCondition(expression.condition));
      const whenTrue = setEmitter(expression.whenTrue);
      const whenFalse = setEmitter(expression.whenFalse);
      return (item, options, into, bound) =>
        (condition.matches(item, options) ? whenTrue : whenFalse)(item, options, into, bound);
    }
    case 'set': {
      const names = expression.elements.map((element) => literalName(element.value));
      return (_item, _options, into) => {
        for (const name of names) into.add(name);
      };
    }
    case 'key': {
      const key = planKey(expression.name);
      return (item, _options, into) => addValueNames(readKey(item, key), into, identity);
    }
    case 'map': {
      const source = setEmitter(expression.source);
      const body = setEmitter(expression.body);
      return (item, options, into, bound) => {
        const elements = new Set<string>();
        source(item, options, elements, bound);
        for (const element of elements) body(item, options, into, element);
      };
    }
    default:
      return valueEmitter(expression);
  }
}

function valueEmitter(expression: ValueExpression): SetEmitter {
  switch (expression.kind) {
    case 'literal': {
      const name = literalName(expression.value);
      return (_item, _options, into) => into.add(name);
    }
    case 'identifier':
      return (_item, _options, into, bound) => {
        if (bound !== undefined) into.add(bound);
      };
    case 'format': {
      const parts = expression.format.value.split('%s');
      const format = (name: string): string => parts.join(name);
      const subject = expression.subject;
      if (subject.kind === 'identifier') {
        return (_item, _options, into, bound) => {
          if (bound !== undefined) into.add(format(bound));
        };
      }
      const key = planKey(subject.name);
      return (item, _options, into) => addValueNames(readKey(item, key), into, format);
    }
  }
}

/** An array gives its scalar elements, a scalar gives itself; missing, null and objects give nothing. */
function addValueNames(value: unknown, into: Set<string>, format: (name: string) => string): void {
  if (Array.isArray(value)) {
    for (const element of value) {
      const name = scalarName(element);
      if (name !== undefined) into.add(format(name));
    }
    return;
  }
  const name = scalarName(value);
  if (name !== undefined) into.add(format(name));
}

function scalarName(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

function literalName(value: LiteralValue): string {
  return String(value);
}

function identity(name: string): string {
  return name;
}
