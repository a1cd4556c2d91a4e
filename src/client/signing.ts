/**
 * The string a signed request's HMAC covers (README, "Signed requests"). Pure string work, shared by the
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
  const query = target.slice(mark + 1);
  const params = query.split('&');
  const at = params.findIndex((param) => param.startsWith(`${SIGN_PARAM}=`) || param === SIGN_PARAM);
  if (at < 0) return target;
  params.splice(at, 1);
  return `${target.slice(0, mark + 1)}${params.join('&')}`;
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
