import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Recommender } from '../../../src/engine/recommender.js';
import type { RecommendationRequest } from '../../../src/engine/request.js';
import { errorsPlugin } from '../../../src/server/plugins/errors.js';
import { jsonBodyPlugin } from '../../../src/server/plugins/json-body.js';
import { RepeatedBodies } from '../../../src/server/repeated-bodies.js';
import { recommendationRoutes } from '../../../src/server/routes/recommendations.js';
import { zodValidatorCompiler } from '../../../src/server/validation.js';

/** The recommendation routes before a recommender that only records the requests it gets. */
async function appRecording(requests: RecommendationRequest[]) {
  const recommender = {
    recommend(_tenant: unknown, request: RecommendationRequest, done: (answer: string) => void) {
      requests.push(request);
      done('{"items":[],"count":0,"algorithm":"recorded","recommId":"r"}');
    },
  };
  const app = Fastify();
  app.setValidatorCompiler(zodValidatorCompiler);
  app.decorate('recommender', recommender as unknown as Recommender);
  await app.register(errorsPlugin);
  await app.register(jsonBodyPlugin, { bodies: new RepeatedBodies() });
  await app.register(recommendationRoutes);
  return app;
}

describe('the POST recommendation routes', () => {
  it.each([
    ['/recommendations', { logicType: 'user-to-item', userId: 'u1' }],
    ['/recommendations/items-to-items', { itemIds: ['a', 'b'] }],
  ])('%s remember a body sent again, unless it asks for noCache', async (url, seeds) => {
    const requests: RecommendationRequest[] = [];
    const app = await appRecording(requests);
    const body = { ...seeds, includedProperties: ['attributes.name'] };
    for (const sent of [body, body, { ...body, noCache: true }, { ...body, noCache: true }]) {
      const answer = await app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(sent),
      });
      expect(answer.statusCode).toBe(200);
    }
    const paths = requests.map((request) => request.projection.includedProperties);
    expect(paths).toEqual(Array(4).fill(['attributes.name']));
    expect(paths[1]).toBe(paths[0]);
    expect(Object.isFrozen(paths[0])).toBe(true);
    expect(paths[3]).not.toBe(paths[2]);
    expect(Object.isFrozen(paths[2])).toBe(false);
    await app.close();
  });
});
