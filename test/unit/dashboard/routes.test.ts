import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorsPlugin } from '../../../src/server/plugins/errors.js';
import { DASHBOARD_CSP, dashboardRoutes } from '../../../src/server/routes/dashboard.js';

describe('dashboard routes', () => {
  let app: FastifyInstance;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'nextrec-dashboard-'));
    writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(path.join(dir, 'app.js'), 'console.log(1);');
    writeFileSync(path.join(dir, 'app.css'), 'body{}');
    writeFileSync(path.join(dir, 'notes.txt'), 'not an asset type');
    app = Fastify();
    await app.register(errorsPlugin);
    await app.register(dashboardRoutes, { dir });
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the page at /dashboard and /dashboard/ with the CSP', async () => {
    for (const url of ['/dashboard', '/dashboard/']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(response.body).toContain('<title>t</title>');
    }
  });

  it('answers assets with their content type', async () => {
    const js = await app.inject({ method: 'GET', url: '/dashboard/app.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    const css = await app.inject({ method: 'GET', url: '/dashboard/app.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toBe('body{}');
  });

  it('keeps contents in memory after the first read', async () => {
    writeFileSync(path.join(dir, 'late.css'), 'a{}');
    expect((await app.inject({ method: 'GET', url: '/dashboard/late.css' })).body).toBe('a{}');
    writeFileSync(path.join(dir, 'late.css'), 'b{}');
    expect((await app.inject({ method: 'GET', url: '/dashboard/late.css' })).body).toBe('a{}');
  });

  it('answers 404 in the error body for anything else, paths that climb out included', async () => {
    for (const url of [
      '/dashboard/missing.js',
      '/dashboard/notes.txt',
      '/dashboard/..%2Fpackage.json',
      '/dashboard/%2E%2E',
      '/dashboard/.hidden.js',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toMatchObject({ statusCode: 404, code: 'NOT_FOUND', error: 'Not Found' });
    }
  });

  it('says when the dashboard was not built', async () => {
    const bare = Fastify();
    await bare.register(errorsPlugin);
    await bare.register(dashboardRoutes, { dir: path.join(dir, 'nowhere') });
    const response = await bare.inject({ method: 'GET', url: '/dashboard' });
    expect(response.statusCode).toBe(404);
    expect(response.json().message).toMatch(/not built/);
    await bare.close();
  });
});
