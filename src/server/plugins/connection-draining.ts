import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * While closing, answers carry `Connection: close` and keep-alive sockets are closed as soon as they go
 * idle, so close() waits only for requests in flight, never for a client's idle connection to time out.
 */
export const connectionDrainingPlugin = fp(async (app: FastifyInstance) => {
  let closing = false;
  let sweeper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    sweeper = setInterval(() => app.server.closeIdleConnections(), 25);
    sweeper.unref();
  });
  app.addHook('onClose', async () => clearInterval(sweeper));
  // Callback style: an async hook would cost a promise on every response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
});
