import type { KeyPlan } from './keys.js';
import type { RunSubject } from './plan.js';

/**
 * What `context_item('k')` and `context_user('k')` read (docs/guide.md, "Context in nextQL"): a reader of
 * a key of the request's seed item, and of its user's stored document; absent when the request has none.
 * A reader answers `undefined` for a missing key.
 */
export interface EvaluationContext {
  readonly item?: (key: KeyPlan) => unknown;
  readonly user?: (key: KeyPlan) => unknown;
}

/** Per-evaluation inputs. `now` defaults to the current time; without `context` the context functions read nothing. */
export interface EvaluationOptions {
  readonly now?: Date | number;
  readonly context?: EvaluationContext;
}

/** Mutable per-run input of evaluation, set before each run: the current time as text, and the context. */
export interface RunValues {
  now: string;
  context: EvaluationContext | undefined;
}

/** The largest magnitude a Date accepts; outside it `toISOString` would throw. */
const MAX_TIME = 8.64e15;

/** The value of `now()`: an ISO 8601 string, which compares as an instant against dates. */
export function nowText(options: EvaluationOptions | undefined): string {
  const requested = options?.now instanceof Date ? options.now.getTime() : options?.now;
  const time = requested !== undefined && Math.abs(requested) <= MAX_TIME ? requested : Date.now();
  return new Date(time).toISOString();
}

/** The value of a run subject in this run; `undefined` when missing. */
export function runValue(subject: RunSubject, run: RunValues): unknown {
  if (subject.kind === 'now') return run.now;
  return run.context?.[subject.scope]?.(subject.key);
}
