import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../../contract/errors.js';

/**
 * The dashboard's page and assets, as `npm run build` leaves them in dist/dashboard
 * (scripts/build-dashboard.mjs). The page signs in with a tenant's credentials and calls the API from
 * the same origin, so these routes themselves need none.
 */

/** Only the same origin: the bundled script and stylesheet, API calls, and charts drawn on canvas. */
export const DASHBOARD_CSP = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'";

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** One file name of the build: no separators, no leading dot (so never `..`), a known extension. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/**
 * Where the build puts the dashboard: next to the compiled code (dist/src/server/routes/dashboard.js →
 * dist/dashboard). Run from the TypeScript sources (tests), the same place under dist/.
 */
export function defaultDashboardDir(): string {
  const here = fileURLToPath(import.meta.url);
  const root = path.resolve(path.dirname(here), '../../..');
  return here.endsWith('.ts') ? path.join(root, 'dist/dashboard') : path.join(root, 'dashboard');
}

export interface DashboardOptions {
  /** The built dashboard's directory (default: {@link defaultDashboardDir}). */
  dir?: string;
}

export async function dashboardRoutes(app: FastifyInstance, options: DashboardOptions = {}): Promise<void> {
  const dir = options.dir ?? defaultDashboardDir();
  /** File contents by name, read at first use; a missing file is not remembered (a later build may add it). */
  const files = new Map<string, Promise<Buffer>>();

  function load(name: string): Promise<Buffer> {
    let file = files.get(name);
    if (file === undefined) {
      file = readFile(path.join(dir, name));
      files.set(name, file);
      file.catch(() => files.delete(name));
    }
    return file;
  }

  async function send(reply: FastifyReply, name: string): Promise<FastifyReply> {
    const type = CONTENT_TYPES[path.extname(name)];
    if (!ASSET_NAME.test(name) || type === undefined) throw notFound(name);
    let body: Buffer;
    try {
      body = await load(name);
    } catch {
      throw name === 'index.html'
        ? new ApiError('NOT_FOUND', 'the dashboard is not built: run npm run build')
        : notFound(name);
    }
    return (
      reply
        .header('content-type', type)
        .header('content-security-policy', DASHBOARD_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        // Asset names carry no hash: browsers revalidate, so a new build shows at once.
        .header('cache-control', 'no-cache')
        .send(body)
    );
  }

  const route = { config: { access: 'public' as const }, schema: { hide: true } };
  app.get('/dashboard', route, (_request, reply) => send(reply, 'index.html'));
  app.get('/dashboard/', route, (_request, reply) => send(reply, 'index.html'));
  app.get('/dashboard/:asset', route, (request, reply) =>
    send(reply, (request.params as { asset: string }).asset),
  );
}

function notFound(name: string): ApiError {
  return new ApiError('NOT_FOUND', `the dashboard has no asset '${name}'`);
}
