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

/** Each character's value as a lower-case hex digit; -1 for any other. */
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX_VALUES[digit.toString(16).charCodeAt(0)] = digit;
const DASH = 0x2d;
const UUID_LENGTH = 36;
/** Where a UUID's text has its dashes: 1 at those places. */
const DASH_AT = new Uint8Array(UUID_LENGTH);
for (const at of [8, 13, 18, 23]) DASH_AT[at] = 1;
/** The words `recommIdBits` returns, reused by its next call. */
const bits = new Int32Array(4);

/**
 * The 128 bits of a recommId as `newRecommId` writes it (a UUID's text, lower case), four words, valid
 * until the next call; undefined for any other text. Read character by character: pages read the bits of
 * every answer they keep (engine/recomm-pages.ts), where a pattern and slices cost more than the rest of
 * keeping the page.
 */
export function recommIdBits(recommId: string): Int32Array | undefined {
  if (recommId.length !== UUID_LENGTH) return undefined;
  let word = 0;
  let digits = 0;
  for (let i = 0; i < UUID_LENGTH; i++) {
    const code = recommId.charCodeAt(i);
    if (DASH_AT[i] === 1) {
      if (code !== DASH) return undefined;
      continue;
    }
    const value = code < 128 ? HEX_VALUES[code] : -1;
    if (value < 0) return undefined;
    word = (word << 4) | value;
    if (++digits % 8 === 0) bits[digits / 8 - 1] = word;
  }
  return bits;
}
