import type { FastifyInstance } from 'fastify';
import { scenarios } from '../../config/resources.js';
import { registerConfigResource } from './config-resource.js';

export async function scenarioRoutes(app: FastifyInstance): Promise<void> {
  registerConfigResource(app, '/scenarios', scenarios, 'slug');
}
