/**
 * Signs requests to a nextrec daemon with a tenant's private or public token (docs/guide.md, "Signed requests").
 * Imported as `nextrec/client`; it uses only Web Crypto, URL and TextEncoder, so it runs in browsers and
 * in Node.js 20 and later alike.
 */
import { PUBLIC_TOKEN_PARAM, SIGN_PARAM, TIMESTAMP_PARAM, isQuerySigned, stringToSign } from './signing.js';

export { stringToSign, unsignedTarget } from './signing.js';

export interface SignOptions {
  /** `GET` by default. */
  method?: string;
  /** The URL to call: absolute, or a path with its query (`/recommendations/user-to-item/u1?count=5`). */
  url: string;
  /** The private token (server side) or the public token (browsers and widgets). */
  token: string;
  /** Set when `token` is the public token: it then travels as `publicToken=` in the query. */
  publicToken?: boolean;
  /** The exact body text to send (non-GET requests); signed byte for byte. */
  body?: string;
  /** Unix seconds; the current time by default. */
  timestamp?: number;
}

export interface SignedRequest {
  /** The URL to call, with `publicToken` and, for GET, `hmac_timestamp` and `hmac_sign` added. */
  url: string;
  /** Headers to add: `X-Hmac-Timestamp` and `X-Hmac-Sign` for methods other than GET. */
  headers: Record<string, string>;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lowercase hex HMAC-SHA256 of `message` under `key`. */
export async function hmacHex(key: string, message: string): Promise<string> {
  const encoder = new TextEncoder();
  const cryptoKey = await globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', cryptoKey, encoder.encode(message)));
  let hex = '';
  for (const byte of mac) hex += HEX[byte];
  return hex;
}

function appendParam(url: string, name: string, value: string): string {
  const hash = url.indexOf('#');
  const base = hash < 0 ? url : url.slice(0, hash);
  const separator = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return `${base}${separator}${name}=${encodeURIComponent(value)}`;
}

/** The request target (path and query) of a URL, serialised as fetch sends it. */
function targetOf(url: string): string {
  const parsed = new URL(url, 'http://localhost');
  const full = parsed.hash ? parsed.href.slice(0, -parsed.hash.length) : parsed.href;
  return full.slice(parsed.origin.length);
}

/**
 * Signs one request. For GET, the returned URL carries everything; for other methods, send the returned
 * headers too, and the body exactly as passed here.
 */
export async function signRequest(options: SignOptions): Promise<SignedRequest> {
  const method = (options.method ?? 'GET').toUpperCase();
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  let url = options.url;
  if (options.publicToken) url = appendParam(url, PUBLIC_TOKEN_PARAM, options.token);
  if (isQuerySigned(method)) {
    url = appendParam(url, TIMESTAMP_PARAM, timestamp);
    const sign = await hmacHex(options.token, stringToSign(method, targetOf(url), timestamp, ''));
    return { url: appendParam(url, SIGN_PARAM, sign), headers: {} };
  }
  const sign = await hmacHex(
    options.token,
    stringToSign(method, targetOf(url), timestamp, options.body ?? ''),
  );
  return { url, headers: { 'X-Hmac-Timestamp': timestamp, 'X-Hmac-Sign': sign } };
}
