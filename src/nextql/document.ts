import { readKey, type KeyPlan, type NextqlItem } from './keys.js';
import type { ConditionPlan, Subject } from './plan.js';
import { compareValues } from './values.js';

/** A condition over one item; `now` is the ISO 8601 text of the evaluation's current time. */
export type DocumentPredicate = (item: NextqlItem, now: string) => boolean;

export function documentPredicate(plan: ConditionPlan): DocumentPredicate {
  switch (plan.kind) {
    case 'constant': {
      const value = plan.value;
      return () => value;
    }
    case 'not': {
      const operand = documentPredicate(plan.operand);
      return (item, now) => !operand(item, now);
    }
    case 'and': {
      const operands = plan.operands.map(documentPredicate);
      return (item, now) => operands.every((operand) => operand(item, now));
    }
    case 'or': {
      const operands = plan.operands.map(documentPredicate);
      return (item, now) => operands.some((operand) => operand(item, now));
    }
    case 'test': {
      const matches = plan.test.matches;
      const read = subjectReader(plan.subject);
      return (item, now) => matches(read(item, now));
    }
    case 'versus-now': {
      const { key, testFor } = plan;
      return (item, now) => testFor(now).matches(readKey(item, key));
    }
    case 'key-pair': {
      const { left, right, operator } = plan;
      return (item) => compareValues(operator, readKey(item, left), readKey(item, right));
    }
  }
}

function subjectReader(subject: Subject): (item: NextqlItem, now: string) => unknown {
  if (subject.kind === 'now') return (_item, now) => now;
  const key: KeyPlan = subject.key;
  return (item) => readKey(item, key);
}
