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

const RECOMM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The 128 bits of a recommId as `newRecommId` writes it (a UUID's text, lower case), four words; undefined
 * for any other text.
 */
export function recommIdBits(recommId: string): Int32Array | undefined {
  if (!RECOMM_ID.test(recommId)) return undefined;
  const hex = recommId.replaceAll('-', '');
  const words = new Int32Array(4);
  for (let i = 0; i < 4; i++) words[i] = Number.parseInt(hex.slice(8 * i, 8 * i + 8), 16) | 0;
  return words;
}
