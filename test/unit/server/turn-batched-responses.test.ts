import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { turnBatchedResponsesPlugin } from '../../../src/server/plugins/turn-batched-responses.js';

async function appWith(batched: boolean, events: string[]) {
  const app = Fastify();
  if (batched) await app.register(turnBatchedResponsesPlugin);
  app.addHook('onResponse', (_request, _reply, done) => {
    events.push('answered');
    done();
  });
  app.get('/', (_request, reply) => {
    // Stands for the other requests of the turn: work queued to run once the turn's callbacks are done.
    setImmediate(() => events.push('rest of the turn'));
    reply.send({ ok: true });
  });
  return app;
}

describe('answers batched per event-loop turn', () => {
  it('leave after the rest of their turn, unchanged', async () => {
    const events: string[] = [];
    const app = await appWith(true, events);
    const response = await app.inject('/');
    expect(response.json()).toEqual({ ok: true });
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(events).toEqual(['rest of the turn', 'answered']);
    await app.close();
  });

  it('without the plugin, an answer leaves as soon as its handler is done', async () => {
    const events: string[] = [];
    const app = await appWith(false, events);
    await app.inject('/');
    expect(events[0]).toBe('answered');
    await app.close();
  });
});
