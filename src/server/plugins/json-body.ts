import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { LONE_SURROGATE } from '../../contract/common.js';
import { ApiError } from '../../contract/errors.js';
import type { RepeatedBodies } from '../repeated-bodies.js';
import { deferParseError, holdSignedBody } from './auth.js';

/**
 * How deeply objects and arrays of a JSON body may nest, the body itself being level 1 (docs/errors.md:
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
 * Whether `text` may have a JSON escape of a UTF-16 surrogate (`\ud800` to `\udfff`, any case). Valid
 * UTF-8 decodes to no lone surrogate, so only such an escape can put one in a parsed body; a body without
 * one is not searched further. (`\ud0xx`-`\ud7xx`, which are no surrogates, only make it look.)
 */
function maySurrogateEscape(text: string): boolean {
  return text.includes('\\ud') || text.includes('\\uD');
}

/**
 * Whether a string of `value`, a name or a value, is not well-formed UTF-16: it holds a lone surrogate,
 * which no UTF-8 text, DuckDB string or JSON column can hold. On the first one, `path` is left naming it
 * (names and indexes from the body down). `value` nests at most JSON_DEPTH_LIMIT levels (checked before).
 */
export function holdsIllFormedString(value: unknown, path: (string | number)[] = []): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const element: unknown = value[index];
      if (typeof element === 'number' || typeof element === 'boolean' || element === null) continue;
      path.push(index);
      if (holdsIllFormedString(element, path)) return true;
      path.pop();
    }
    return false;
  }
  for (const key in value) {
    path.push(key);
    if (LONE_SURROGATE.test(key) || holdsIllFormedString((value as Record<string, unknown>)[key], path))
      return true;
    path.pop();
  }
  return false;
}

function illFormed(names: (string | number)[]): ApiError {
  // The path names the string without repeating its lone surrogate.
  const path = names.join('.').replace(/\p{Surrogate}/gu, '\uFFFD');
  const message =
    'a string holds a lone surrogate (a \\ud800-\\udfff escape without its pair): not valid Unicode';
  return new ApiError('INVALID_BODY', `malformed JSON body${path ? ` at ${path}` : ''}: ${message}`, [
    { path, message },
  ]);
}

const TOO_DEEP = new ApiError(
  'INVALID_BODY',
  `JSON body nests objects and arrays deeper than ${JSON_DEPTH_LIMIT} levels (the limit)`,
);

/** Why a JSON body parsed from `text` is malformed though it parses: too deep, or not valid Unicode. */
export function malformedBody(text: string, value: unknown): ApiError | undefined {
  if (nestsDeeperThan(value, JSON_DEPTH_LIMIT)) return TOO_DEEP;
  const path: (string | number)[] = [];
  if (maySurrogateEscape(text) && holdsIllFormedString(value, path)) return illFormed(path);
  return undefined;
}

/**
 * JSON bodies parsed as the API parses them (`malformedBody`), for an app without the auth plugin's
 * signed bodies (the embeddings helper).
 */
export const plainJsonBodyPlugin = fp(async (app: FastifyInstance) => {
  const defaultParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) =>
    defaultParser(request, text as string, (error, value) => {
      if (error) return done(error);
      const malformed = malformedBody(text as string, value);
      if (malformed) done(malformed);
      else done(null, value);
    }),
  );
});

/**
 * JSON bodies as Fastify parses them, except that an empty one is no body at all: clients commonly send
 * `Content-Type: application/json` on every request, a DELETE included, and a route without a body must
 * not fail on it. A route that needs a body still rejects the missing one through its schema. On a route
 * whose bodies repeat (`rememberBody`), a text parsed before gives the body remembered for it. A signed
 * request's text is kept for its signature check, and its parse error waits for that check (auth plugin).
 * A body that is not UTF-8, nests deeper than JSON_DEPTH_LIMIT, or has a string that is not valid Unicode
 * (a lone surrogate escaped as `\ud800`) is malformed (400 INVALID_BODY): what is stored or ranked never
 * meets any of them.
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
  const parseJson: typeof defaultParser = (request, text, done) =>
    defaultParser(request, text, (error, value) => {
      if (error) return done(error);
      const malformed = malformedBody(text, value);
      if (malformed) done(malformed);
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
