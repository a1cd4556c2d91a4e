import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errorsPlugin } from '../../../src/server/plugins/errors.js';
import { JSON_DEPTH_LIMIT, nestsDeeperThan } from '../../../src/server/plugins/json-body.js';
import { readinessPlugin } from '../../../src/server/plugins/readiness.js';

let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function readinessApp(): Promise<FastifyInstance> {
  app = Fastify({ return503OnClosing: false });
  await app.register(errorsPlugin);
  await app.register(readinessPlugin);
  app.get('/health', { config: { access: 'public' } }, async () => ({ status: 'ok' }));
  app.get('/health/ready', { config: { access: 'public' } }, async () => {
    if (!app!.readiness.ready) throw app!.readiness.notReady();
    return { status: 'ready' };
  });
  app.get('/data', async () => ({ data: [] }));
  await app.ready();
  return app;
}

describe('readiness', () => {
  it('answers 503 NOT_READY, saying what is not done, until the models are loaded and ranking warmed up; public routes answer', async () => {
    const server = await readinessApp();
    expect((await server.inject('/health')).statusCode).toBe(200);
    for (const url of ['/health/ready', '/data']) {
      const response = await server.inject(url);
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.json()).toMatchObject({
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'NOT_READY',
        message: 'the daemon is starting: the built models are not loaded yet; ranking is not warmed up yet',
        details: [{ stopping: false, checks: { state: 'done', models: 'pending', warmup: 'pending' } }],
      });
    }
    server.readiness.done('models');
    expect((await server.inject('/data')).json()).toMatchObject({
      code: 'NOT_READY',
      message: 'the daemon is starting: ranking is not warmed up yet',
      details: [{ stopping: false, checks: { state: 'done', models: 'done', warmup: 'pending' } }],
    });
    server.readiness.done('warmup');
    expect((await server.inject('/health/ready')).json()).toEqual({ status: 'ready' });
    expect((await server.inject('/data')).statusCode).toBe(200);
  });

  it('answers 404 for unknown routes whether ready or not', async () => {
    const server = await readinessApp();
    expect((await server.inject('/nothing')).json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });

  it('is not ready again once the daemon stops', async () => {
    const server = await readinessApp();
    server.readiness.done('models');
    server.readiness.done('warmup');
    server.readiness.stop();
    const response = await server.inject('/data');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ code: 'NOT_READY', message: 'the daemon is shutting down' });
    // Closing the app stops it too.
    const closing = await readinessApp();
    closing.readiness.done('models');
    closing.readiness.done('warmup');
    expect(closing.readiness.ready).toBe(true);
    await closing.close();
    expect(closing.readiness.report()).toMatchObject({ ready: false, stopping: true });
  });
});

describe('the JSON depth limit', () => {
  function nested(levels: number): unknown {
    let value: unknown = 'leaf';
    for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { x: value };
    return value;
  }

  it('counts objects and arrays, the body itself being level 1', () => {
    expect(nestsDeeperThan('scalar', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({ a: 1, b: [1, 2] }, 2)).toBe(false);
    expect(nestsDeeperThan({ a: 1, b: [1, { c: 1 }] }, 2)).toBe(true);
    expect(nestsDeeperThan(nested(JSON_DEPTH_LIMIT), JSON_DEPTH_LIMIT)).toBe(false);
    expect(nestsDeeperThan(nested(JSON_DEPTH_LIMIT + 1), JSON_DEPTH_LIMIT)).toBe(true);
  });

  it('looks no deeper than the limit, so any depth is judged without exhausting the stack', () => {
    expect(nestsDeeperThan(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)), JSON_DEPTH_LIMIT)).toBe(
      true,
    );
  });
});
