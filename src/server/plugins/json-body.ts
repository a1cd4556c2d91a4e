import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { RepeatedBodies } from '../repeated-bodies.js';

/**
 * JSON bodies as Fastify parses them, except that an empty one is no body at all: clients commonly send
 * `Content-Type: application/json` on every request, a DELETE included, and a route without a body must
 * not fail on it. A route that needs a body still rejects the missing one through its schema. On a route
 * whose bodies repeat (`rememberBody`), a text parsed before gives the body remembered for it.
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
    if (text === '') {
      done(null, undefined);
      return;
    }
    const { rememberBody } = request.routeOptions.config;
    if (!rememberBody) {
      parseJson(request, text, done);
      return;
    }
    const remembered = bodies.get(text);
    if (remembered !== undefined) {
      done(null, remembered);
      return;
    }
    parseJson(request, text, (error, parsed) => {
      if (error) done(error);
      else done(null, rememberBody(parsed) ? bodies.remember(text, parsed) : parsed);
    });
  });
});
