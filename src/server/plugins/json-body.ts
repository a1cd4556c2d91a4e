import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { RepeatedBodies } from '../repeated-bodies.js';
import { deferParseError, holdSignedBody } from './auth.js';

/**
 * JSON bodies as Fastify parses them, except that an empty one is no body at all: clients commonly send
 * `Content-Type: application/json` on every request, a DELETE included, and a route without a body must
 * not fail on it. A route that needs a body still rejects the missing one through its schema. On a route
 * whose bodies repeat (`rememberBody`), a text parsed before gives the body remembered for it. A signed
 * request's text is kept for its signature check, and its parse error waits for that check (auth plugin).
 */
export const jsonBodyPlugin = fp(async (app: FastifyInstance, options: { bodies: RepeatedBodies }) => {
  const { bodies } = options;
  // A remembered body reaches the handler only through the route's body schema.
  app.addHook('onRoute', (route) => {
    if (route.config?.rememberBody && !route.schema?.body) {
      throw new Error(`${route.method} ${route.url}: rememberBody needs a body schema`);
    }
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
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
