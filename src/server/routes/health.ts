import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../version.js';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/health', { config: { access: 'public' }, schema: { hide: true } }, async () => ({
    status: 'ok',
    version: VERSION,
    uptimeS: Math.floor((Date.now() - app.startedAt) / 1000),
    // Which embedder vector search uses (docs/guide.md, "Vectors and search").
    embedder: { kind: app.runtime.vectors.embedder.kind, model: app.runtime.vectors.embedder.model },
  }));
  // Readiness (docs/configuration.md, "Health and metrics"): 200 once the state and the built models are loaded and
  // ranking is warmed up, 503
  // NOT_READY saying what is not, until then and again while the daemon stops. A full disk is reported
  // (`disk: "full"`) but keeps the daemon ready: it still serves every read, and its writes resume by
  // themselves once space returns.
  app.get('/health/ready', { config: { access: 'public' }, schema: { hide: true } }, async () => {
    if (!app.readiness.ready) throw app.readiness.notReady();
    const { state, models, warmup } = app.readiness.report().checks;
    const disk = await app.runtime.store.disk.report();
    return { status: 'ready', checks: { state, models, warmup, disk } };
  });
  app.get('/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
