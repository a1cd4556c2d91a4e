import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** The header that names the daemon that answered (docs/configuration.md, "Cluster mode"). */
export const NODE_HEADER = 'x-nextrec-node';

/**
 * Every answer names its daemon, `<hostname>:<pid>` as its log lines do (their `hostname` and `pid`): behind
 * a load balancer, which daemon answered a request, and where to read its log.
 */
export const nodeHeaderPlugin = fp(async (app: FastifyInstance) => {
  const node = `${hostname()}:${process.pid}`;
  // Callback style: an async hook would cost a promise on every request.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header(NODE_HEADER, node);
    done();
  });
});
