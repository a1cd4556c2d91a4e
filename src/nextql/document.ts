import { readKey, type KeyPlan, type NextqlItem } from './keys.js';
import type { ConditionPlan, Subject } from './plan.js';
import { runValue, type RunValues } from './runtime.js';
import { compareValues } from './values.js';

/** A condition over one item; `run` holds the evaluation's current time (ISO 8601 text) and context. */
export type DocumentPredicate = (item: NextqlItem, run: RunValues) => boolean;

export function documentPredicate(plan: ConditionPlan): DocumentPredicate {
  switch (plan.kind) {
    case 'constant': {
      const value = plan.value;
      return () => value;
    }
    case 'not': {
      const operand = documentPredicate(plan.operand);
      return (item, run) => !operand(item, run);
    }
    case 'and': {
      const operands = plan.operands.map(documentPredicate);
      return (item, run) => operands.every((operand) => operand(item, run));
    }
    case 'or': {
      const operands = plan.operands.map(documentPredicate);
      return (item, run) => operands.some((operand) => operand(item, run));
    }
    case 'test': {
      const matches = plan.test.matches;
      const read = subjectReader(plan.subject);
      return (item, run) => matches(read(item, run));
    }
    case 'versus-run': {
      const { key, value, testFor } = plan;
      return (item, run) => testFor(runValue(value, run)).matches(readKey(item, key));
    }
    case 'run-pair': {
      const { left, right, operator } = plan;
      return (_item, run) => compareValues(operator, runValue(left, run), runValue(right, run));
    }
    case 'key-pair': {
      const { left, right, operator } = plan;
      return (item) => compareValues(operator, readKey(item, left), readKey(item, right));
    }
  }
}

function subjectReader(subject: Subject): (item: NextqlItem, run: RunValues) => unknown {
  if (subject.kind !== 'key') return (_item, run) => runValue(subject, run);
  const key: KeyPlan = subject.key;
  return (item) => readKey(item, key);
}
