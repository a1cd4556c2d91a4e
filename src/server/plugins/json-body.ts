import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../contract/errors.js';
import type { RepeatedBodies } from '../repeated-bodies.js';
import { deferParseError, holdSignedBody } from './auth.js';

/**
 * How deeply objects and arrays of a JSON body may nest, the body itself being level 1 (README, "Errors":
 * the limits of a request).
 */
export const JSON_DEPTH_LIMIT = 64;

/** Whether `value` nests objects and arrays deeper than `levels` (a scalar: 0 levels); never recurses further. */
export function nestsDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  if (Array.isArray(value)) {
    for (const element of value) {
      if (typeof element === 'object' && element !== null && nestsDeeperThan(element, levels - 1))
        return true;
    }
    return false;
  }
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (typeof field === 'object' && field !== null && nestsDeeperThan(field, levels - 1)) return true;
  }
  return false;
}

const NOT_UTF8 = new ApiError('INVALID_BODY', 'request body is not valid UTF-8');

/**
 * JSON bodies as Fastify parses them, except that an empty one is no body at all: clients commonly send
 * `Content-Type: application/json` on every request, a DELETE included, and a route without a body must
 * not fail on it. A route that needs a body still rejects the missing one through its schema. On a route
 * whose bodies repeat (`rememberBody`), a text parsed before gives the body remembered for it. A signed
 * request's text is kept for its signature check, and its parse error waits for that check (auth plugin).
 * A body that is not UTF-8, or nests deeper than JSON_DEPTH_LIMIT, is malformed (400 INVALID_BODY): what
 * is stored or ranked never meets either.
 */
export const jsonBodyPlugin = fp(async (app: FastifyInstance, options: { bodies: RepeatedBodies }) => {
  const { bodies } = options;
  // A remembered body reaches the handler only through the route's body schema.
  app.addHook('onRoute', (route) => {
    if (route.config?.rememberBody && !route.schema?.body) {
      throw new Error(`${route.method} ${route.url}: rememberBody needs a body schema`);
    }
  });
  const defaultParser = app.getDefaultJsonParser('error', 'error');
  const tooDeep = new ApiError(
    'INVALID_BODY',
    `JSON body nests objects and arrays deeper than ${JSON_DEPTH_LIMIT} levels (the limit)`,
  );
  const parseJson: typeof defaultParser = (request, text, done) =>
    defaultParser(request, text, (error, value) => {
      if (error) done(error);
      else if (nestsDeeperThan(value, JSON_DEPTH_LIMIT)) done(tooDeep);
      else done(null, value);
    });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    const text = bytes.toString('utf8');
    holdSignedBody(request, text);
    // An unknown route answers 404 whatever its body (CONTRACT.md, request order).
    if (text === '' || request.is404) {
      done(null, undefined);
      return;
    }
    const { rememberBody } = request.routeOptions.config;
    // A signed request's parse error waits for its signature check.
    const parsed: typeof done = request.pendingSignature
      ? (error, value) => {
          if (!error) return done(null, value);
          deferParseError(request, error);
          done(null, undefined);
        }
      : done;
    if (!isUtf8(bytes)) {
      parsed(NOT_UTF8);
      return;
    }
    if (!rememberBody) {
      parseJson(request, text, parsed);
      return;
    }
    const remembered = bodies.get(text);
    if (remembered !== undefined) {
      done(null, remembered);
      return;
    }
    parseJson(request, text, (error, value) => {
      if (error) parsed(error);
      else done(null, rememberBody(value) ? bodies.remember(text, value) : value);
    });
  });
});
