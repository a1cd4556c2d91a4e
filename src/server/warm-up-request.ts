import { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Recommender } from '../engine/recommender.js';

/**
 * The message of a request the daemon sends itself before it is ready (docs/configuration.md, "Health and metrics"):
 * only the warm-up's own server (warm-up.ts), behind a socket file in a directory of the daemon's
 * alone, makes its requests of this class. A request to the daemon's port never is one, so nothing a
 * client sends can pass for the warm-up.
 */
export class WarmUpMessage extends IncomingMessage {}

/**
 * Whether a request is the daemon's warm-up: it passes readiness and authentication as its tenant,
 * counts in no metric nor rate limit, and is answered without a trace (see `recommenderFor`).
 */
export function isWarmUp(request: FastifyRequest): boolean {
  return request.raw instanceof WarmUpMessage;
}

/** The warm-up's recommenders, by app, while it runs. */
const warmUpRecommenders = new WeakMap<FastifyInstance, Recommender>();

/**
 * The recommender that answers a request: the app's, or for the warm-up one with the same code and
 * ranker but a result cache of its own and no record of answers (`Recommender.unrecorded`).
 */
export function recommenderFor(app: FastifyInstance, request: FastifyRequest): Recommender {
  if (!isWarmUp(request)) return app.recommender;
  let recommender = warmUpRecommenders.get(app);
  if (!recommender) warmUpRecommenders.set(app, (recommender = app.recommender.unrecorded()));
  return recommender;
}

/** Lets the warm-up's recommender go, and its cache with it. */
export function dropWarmUpRecommender(app: FastifyInstance): void {
  warmUpRecommenders.delete(app);
}
