import { createHash, randomUUID } from 'node:crypto';

/**
 * recommIds (docs/guide.md, "Analytics and experiments"): random UUIDs whose first four hex digits are a code of the answer's
 * algorithm, so an impression or a click that carries one is credited to that algorithm by the id alone,
 * however long after the answer it comes, without a record of each answer.
 */
const CODE_DIGITS = 4;
const codes = new Map<string, string>();

/** The four hex digits standing for an algorithm in recommIds. */
export function algorithmCode(algorithm: string): string {
  let code = codes.get(algorithm);
  if (code === undefined) {
    code = createHash('sha256').update(algorithm).digest('hex').slice(0, CODE_DIGITS);
    codes.set(algorithm, code);
  }
  return code;
}

/** A new recommId for an answer of this algorithm. */
export function newRecommId(algorithm: string): string {
  return algorithmCode(algorithm) + randomUUID().slice(CODE_DIGITS);
}

const ALGORITHM_KEY = '"algorithm":"';

/**
 * The algorithm a rendered answer names. Its last `"algorithm":"`: the items' documents come before the
 * answer's own fields, and text after them is in JSON strings, whose quotes are escaped.
 */
export function algorithmOfAnswer(body: string): string {
  const at = body.lastIndexOf(ALGORITHM_KEY);
  if (at < 0) return '';
  const start = at + ALGORITHM_KEY.length;
  return body.slice(start, body.indexOf('"', start));
}
