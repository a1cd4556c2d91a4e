import type { FastifyInstance } from 'fastify';
import { rules } from '../../config/resources.js';
import { registerConfigResource } from './config-resource.js';

export async function ruleRoutes(app: FastifyInstance): Promise<void> {
  registerConfigResource(app, '/rules', rules, 'slug');
}
