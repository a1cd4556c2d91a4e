/**
 * The string a signed request's HMAC covers (docs/guide.md, "Signed requests"). Pure string work, shared by the
 * signing helper that clients import (`nextrec/client`) and by the daemon that verifies: one definition.
 */

export const SIGN_PARAM = 'hmac_sign';
export const TIMESTAMP_PARAM = 'hmac_timestamp';
export const PUBLIC_TOKEN_PARAM = 'publicToken';

/** Methods whose parameters, timestamp and signature travel in the query string. */
export function isQuerySigned(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

/**
 * The request target (path, `?`, raw query) without the `hmac_sign=…` parameter: removed together with
 * the `&` before it, or the one after it when it is the first parameter. Percent-encoding is untouched.
 */
export function unsignedTarget(target: string): string {
  const mark = target.indexOf('?');
  if (mark < 0) return target;
  // The parameter starts right after `?` or after an `&`, and ends at the next `&` or the end.
  let start = mark + 1;
  while (start > 0 && start < target.length) {
    const end = target.indexOf('&', start);
    const stop = end < 0 ? target.length : end;
    if (isSignParam(target, start, stop)) {
      if (start === mark + 1) return target.slice(0, start) + (end < 0 ? '' : target.slice(end + 1));
      return target.slice(0, start - 1) + target.slice(stop);
    }
    start = end + 1;
  }
  return target;
}

/** Whether target[start, stop) is `hmac_sign` or `hmac_sign=…`. */
function isSignParam(target: string, start: number, stop: number): boolean {
  const length = stop - start;
  if (length < SIGN_PARAM.length || !target.startsWith(SIGN_PARAM, start)) return false;
  return length === SIGN_PARAM.length || target[start + SIGN_PARAM.length] === '=';
}

/**
 * What is signed: for GET, the target without its signature (the timestamp is one of its parameters);
 * for other methods, `METHOD\ntarget\ntimestamp\nbody`.
 */
export function stringToSign(method: string, target: string, timestamp: string, body: string): string {
  const unsigned = unsignedTarget(target);
  if (isQuerySigned(method)) return unsigned;
  return `${method}\n${unsigned}\n${timestamp}\n${body}`;
}
