/** Per-evaluation inputs. `now` defaults to the current time. */
export interface EvaluationOptions {
  readonly now?: Date | number;
}

/** The largest magnitude a Date accepts; outside it `toISOString` would throw. */
const MAX_TIME = 8.64e15;

/** The value of `now()`: an ISO 8601 string, which compares as an instant against dates. */
export function nowText(options: EvaluationOptions | undefined): string {
  const requested = options?.now instanceof Date ? options.now.getTime() : options?.now;
  const time = requested !== undefined && Math.abs(requested) <= MAX_TIME ? requested : Date.now();
  return new Date(time).toISOString();
}
