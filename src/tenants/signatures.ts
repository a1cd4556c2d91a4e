import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { ApiError } from '../contract/errors.js';
import { SIGN_PARAM, TIMESTAMP_PARAM, PUBLIC_TOKEN_PARAM, isQuerySigned } from '../client/signing.js';

/** A signature is valid this many seconds either side of the server's clock (docs/guide.md, "Signed requests"). */
export const SIGNATURE_WINDOW_S = 300;

/** Query keys that shape the response: on a signed POST they belong in the (signed) body. */
const PROJECTION_KEYS = ['includedProperties', 'returnProperties'];

/** The signing parameters of a request, as sent. */
export interface SignatureParams {
  timestamp: string;
  /** Lowercased hex. */
  sign: string;
  /** Present when the request is signed with the public token. */
  publicToken?: string;
}

type Query = Record<string, unknown>;
type Headers = Record<string, string | string[] | undefined>;

function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The signing parameters of a request, or undefined when it carries none. GET requests sign their query,
 * so their timestamp and signature must be query parameters; other methods send them as headers (the
 * query is accepted too).
 */
export function signatureParams(method: string, query: Query, headers: Headers): SignatureParams | undefined {
  const inQuery = isQuerySigned(method);
  const sign = single(query[SIGN_PARAM]) ?? (inQuery ? undefined : single(headers['x-hmac-sign']));
  const publicToken = single(query[PUBLIC_TOKEN_PARAM]);
  if (sign === undefined) {
    if (publicToken !== undefined || (inQuery && headers['x-hmac-sign'] !== undefined)) {
      throw new ApiError(
        'SIGNATURE_INVALID',
        inQuery
          ? 'a signed GET carries hmac_timestamp and hmac_sign in its query string'
          : 'a request with a publicToken must be signed (hmac_timestamp, hmac_sign)',
      );
    }
    return undefined;
  }
  const timestamp =
    single(query[TIMESTAMP_PARAM]) ?? (inQuery ? undefined : single(headers['x-hmac-timestamp']));
  if (timestamp === undefined || !/^\d{1,12}$/.test(timestamp)) {
    throw new ApiError('SIGNATURE_INVALID', 'hmac_timestamp must be the signing time in unix seconds');
  }
  // Its characters are checked as it is decoded (checkSignature): a regular expression here would cost
  // every request more than the rest of this function.
  if (sign.length !== SIGN_HEX_LENGTH) throw malformedSign();
  if (!inQuery && PROJECTION_KEYS.some((key) => key in query)) {
    throw new ApiError(
      'SIGNATURE_SCOPE',
      `on a signed ${method}, ${PROJECTION_KEYS.join(' and ')} belong in the body, which the signature covers`,
    );
  }
  return { timestamp, sign: sign.toLowerCase(), publicToken };
}

/** Throws SIGNATURE_EXPIRED unless the timestamp is inside the window around `nowMs`. */
export function checkTimestamp(timestamp: string, nowMs: number): void {
  const skew = Math.abs(nowMs / 1000 - Number(timestamp));
  if (skew > SIGNATURE_WINDOW_S) {
    throw new ApiError(
      'SIGNATURE_EXPIRED',
      `hmac_timestamp is ${Math.round(skew)} s away from the server's clock (at most ${SIGNATURE_WINDOW_S} s)`,
    );
  }
}

/** An HMAC-SHA256 in hex. */
const SIGN_HEX_LENGTH = 64;

function malformedSign(): ApiError {
  return new ApiError('SIGNATURE_INVALID', 'hmac_sign must be a hex HMAC-SHA256 (64 characters)');
}

/** A token as an HMAC key: imported once rather than on every signature it checks. */
export function signingKey(token: string): KeyObject {
  return createSecretKey(token, 'utf8');
}

/**
 * Throws SIGNATURE_INVALID unless `sign` (64 characters) is the hex HMAC-SHA256 of `message` under `key`;
 * constant time.
 */
export function checkSignature(key: KeyObject | string, message: string, sign: string): void {
  // Decoding stops at the first character that is not hex, so a malformed signature comes out short.
  const given = Buffer.from(sign, 'hex');
  if (given.length * 2 !== SIGN_HEX_LENGTH) throw malformedSign();
  const expected = createHmac('sha256', key).update(message, 'utf8').digest();
  if (!timingSafeEqual(given, expected)) {
    throw new ApiError('SIGNATURE_INVALID', 'the signature does not match the request');
  }
}

/**
 * GET signatures that verified, by signature, with the key and request target they verified for: a GET
 * signature is good for its whole window, so the same signed URL asked again (a page's widget reloading)
 * needs its timestamp checked, not its HMAC. Bounded: when full it starts afresh, which costs those
 * signatures one more HMAC each.
 */
export class VerifiedGets {
  private readonly entries = new Map<string, { key: string; target: string }>();

  constructor(private readonly capacity = 10_000) {}

  has(sign: string, key: string, target: string): boolean {
    const entry = this.entries.get(sign);
    return entry !== undefined && entry.key === key && entry.target === target;
  }

  add(sign: string, key: string, target: string): void {
    if (this.entries.size >= this.capacity) this.entries.clear();
    this.entries.set(sign, { key, target });
  }
}

/**
 * Remembers the signatures of non-GET requests for as long as their timestamps are valid, so each is
 * used once. Bounded: when `capacity` signatures are all still valid, new signed writes are refused with
 * 429 until the oldest expire, rather than forgetting one and allowing its replay.
 */
export class ReplayGuard {
  /** Signature key → when it can be forgotten (ms); insertion order roughly follows expiry. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly capacity = 1_000_000) {}

  get size(): number {
    return this.seen.size;
  }

  /** Records a use of the signature; throws SIGNATURE_REPLAYED for a second use. */
  use(key: string, timestamp: string, nowMs: number): void {
    this.forgetExpired(nowMs, false);
    if (this.seen.has(key)) throw new ApiError('SIGNATURE_REPLAYED', 'this signature was already used');
    if (this.seen.size >= this.capacity) {
      this.forgetExpired(nowMs, true);
      if (this.seen.size >= this.capacity) {
        const retryS = Math.max(1, Math.ceil((this.seen.values().next().value! - nowMs) / 1000));
        throw new ApiError(
          'RATE_LIMITED',
          'too many signed writes inside the signature window; retry later',
          undefined,
          { 'retry-after': String(retryS) },
        );
      }
    }
    // One second beyond the window, so clock rounding cannot reopen it.
    this.seen.set(key, (Number(timestamp) + SIGNATURE_WINDOW_S + 1) * 1000);
  }

  /** Drops expired entries from the oldest on (all of them when `everywhere`). */
  private forgetExpired(nowMs: number, everywhere: boolean): void {
    for (const [key, expiresAt] of this.seen) {
      if (expiresAt <= nowMs) this.seen.delete(key);
      else if (!everywhere) return;
    }
  }
}
