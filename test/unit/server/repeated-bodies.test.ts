import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorsPlugin } from '../../../src/server/plugins/errors.js';
import { jsonBodyPlugin } from '../../../src/server/plugins/json-body.js';
import { RepeatedBodies } from '../../../src/server/repeated-bodies.js';
import { zodValidatorCompiler } from '../../../src/server/validation.js';

interface Body {
  userId: string;
  tags?: string[];
  noCache?: boolean;
}

/** Counts the runs of each route's schema and keeps the bodies its handler got. */
async function appWith(bodies = new RepeatedBodies()) {
  const runs = { remembering: 0, tagged: 0, plain: 0 };
  const received: Body[] = [];
  const schema = (
    route: keyof typeof runs,
    tags: z.ZodType<string[] | undefined> = z.array(z.string()).optional(),
  ) =>
    z.preprocess(
      (body) => {
        runs[route]++;
        return body;
      },
      z.strictObject({ userId: z.string(), tags, noCache: z.boolean().optional() }),
    );
  const rememberBody = (parsed: unknown) => (parsed as { noCache?: unknown }).noCache !== true;
  const handler = (request: { body: unknown }) => {
    received.push(request.body as Body);
    return { ok: true };
  };

  const app = Fastify();
  app.setValidatorCompiler(zodValidatorCompiler);
  await app.register(errorsPlugin);
  await app.register(jsonBodyPlugin, { bodies });
  app.post('/remembering', { config: { rememberBody }, schema: { body: schema('remembering') } }, handler);
  app.post(
    '/tagged',
    { config: { rememberBody }, schema: { body: schema('tagged', z.array(z.string()).min(1)) } },
    handler,
  );
  app.post('/plain', { schema: { body: schema('plain') } }, handler);
  const post = (url: string, text: string) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: text });
  return { app, runs, received, post };
}

describe('repeated bodies', () => {
  it('a text sent again is parsed and validated once, and its handler gets the same frozen body', async () => {
    const { app, runs, received, post } = await appWith();
    const text = JSON.stringify({ userId: 'u1', tags: ['a', 'b'] });
    for (let i = 0; i < 3; i++) expect((await post('/remembering', text)).statusCode).toBe(200);
    expect(runs.remembering).toBe(1);
    expect(received[0]).toEqual({ userId: 'u1', tags: ['a', 'b'] });
    expect(received[1]).toBe(received[0]);
    expect(received[2]).toBe(received[0]);
    expect(Object.isFrozen(received[0])).toBe(true);
    expect(Object.isFrozen(received[0].tags)).toBe(true);
    await app.close();
  });

  it('another text is parsed and validated anew, even when it means the same body', async () => {
    const { app, runs, received, post } = await appWith();
    await post('/remembering', '{"userId":"u1"}');
    await post('/remembering', '{ "userId": "u1" }');
    expect(runs.remembering).toBe(2);
    expect(received[1]).toEqual(received[0]);
    await app.close();
  });

  it('an invalid body fails every time it is sent, with the same error', async () => {
    const { app, runs, post } = await appWith();
    const answers = [await post('/remembering', '{"userId":5}'), await post('/remembering', '{"userId":5}')];
    for (const answer of answers) {
      expect(answer.statusCode).toBe(400);
      expect(answer.json()).toMatchObject({ code: 'INVALID_BODY' });
    }
    expect(answers[1].json()).toEqual(answers[0].json());
    expect(runs.remembering).toBe(2);
    await app.close();
  });

  it('a body the route does not accept for remembering, or a route that does not remember, parses every time', async () => {
    const { app, runs, received, post } = await appWith();
    const noCache = JSON.stringify({ userId: 'u1', noCache: true });
    await post('/remembering', noCache);
    await post('/remembering', noCache);
    await post('/plain', '{"userId":"u1"}');
    await post('/plain', '{"userId":"u1"}');
    expect(runs).toMatchObject({ remembering: 2, plain: 2 });
    expect(received.map((body) => Object.isFrozen(body))).toEqual([false, false, false, false]);
    await app.close();
  });

  it('a long text is not remembered', async () => {
    const { app, runs, post } = await appWith();
    const text = JSON.stringify({ userId: 'u'.repeat(5000) });
    await post('/remembering', text);
    await post('/remembering', text);
    expect(runs.remembering).toBe(2);
    await app.close();
  });

  it('the same text on two routes is validated by the schema of each', async () => {
    const { app, runs, post } = await appWith();
    const text = '{"userId":"u1"}';
    expect((await post('/remembering', text)).statusCode).toBe(200);
    const tagged = await post('/tagged', text);
    expect(tagged.statusCode).toBe(400);
    expect(tagged.json()).toMatchObject({ code: 'INVALID_BODY' });
    expect((await post('/remembering', text)).statusCode).toBe(200);
    expect((await post('/tagged', '{"userId":"u1","tags":["a"]}')).statusCode).toBe(200);
    expect(runs).toMatchObject({ remembering: 1, tagged: 2 });
    await app.close();
  });

  it('the least recently used texts are forgotten once the bytes are exceeded', async () => {
    // Room for three texts of 15 characters: 3 × (15 × 18 + 512) bytes.
    const { app, runs, post } = await appWith(new RepeatedBodies(3 * (15 * 18 + 512)));
    const texts = ['u1', 'u2', 'u3', 'u4'].map((userId) => JSON.stringify({ userId }));
    for (const text of texts) await post('/remembering', text);
    expect(runs.remembering).toBe(4);
    await post('/remembering', texts[3]);
    expect(runs.remembering).toBe(4);
    await post('/remembering', texts[0]);
    expect(runs.remembering).toBe(5);
    await app.close();
  });

  it('a text not sent again within the TTL is forgotten when stale entries are purged', async () => {
    const bodies = new RepeatedBodies(1024 * 1024, 1000);
    const { app, runs, post } = await appWith(bodies);
    const [kept, dropped] = ['u1', 'u2'].map((userId) => JSON.stringify({ userId }));
    await post('/remembering', kept);
    await post('/remembering', dropped);
    // Sent again while fresh, `kept` starts its TTL over; `dropped` is not.
    for (let i = 0; i < 12; i++) {
      await sleep(100);
      await post('/remembering', kept);
    }
    expect(bodies.size).toBe(2);
    bodies.purgeStale();
    expect(bodies.size).toBe(1);
    expect(runs.remembering).toBe(2);
    await post('/remembering', kept);
    expect(runs.remembering).toBe(2);
    await post('/remembering', dropped);
    expect(runs.remembering).toBe(3);
    await app.close();
  });

  it('bodies that fail their schema take no room', async () => {
    const { app, runs, post } = await appWith(new RepeatedBodies(3 * (15 * 18 + 512)));
    await post('/remembering', '{"userId":"u1"}');
    for (let i = 0; i < 5; i++) expect((await post('/remembering', `{"userId":${i}}`)).statusCode).toBe(400);
    expect(runs.remembering).toBe(6);
    await post('/remembering', '{"userId":"u1"}');
    expect(runs.remembering).toBe(6);
    await app.close();
  });

  it('a route may remember bodies only with a body schema', async () => {
    const app = Fastify();
    await app.register(jsonBodyPlugin, { bodies: new RepeatedBodies() });
    expect(() => app.post('/bare', { config: { rememberBody: () => true } }, () => ({}))).toThrow(
      /rememberBody needs a body schema/,
    );
    await app.close();
  });
});
