import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../version.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/health', { config: { access: 'public' }, schema: { hide: true } }, async () => ({
    status: 'ok',
    version: VERSION,
    uptimeS: Math.floor((Date.now() - app.startedAt) / 1000),
    // Which embedder vector search uses (README, "Vectors and search").
    embedder: { kind: app.runtime.vectors.embedder.kind, model: app.runtime.vectors.embedder.model },
  }));
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
