import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/server/openapi/document.js';
import { removeDataDir, startDaemonProcess, type DaemonProcess } from '../support/daemon-process.js';
import { mismatch } from '../support/openapi-check.js';

const run = promisify(execFile);
const REDOCLY = path.resolve('node_modules/.bin/redocly');

let daemon: DaemonProcess;
let document: {
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { securitySchemes: Record<string, unknown> };
};

beforeAll(async () => {
  daemon = await startDaemonProcess();
  document = (await (await fetch(`${daemon.url}/openapi.json`)).json()) as typeof document;
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

const operations = () =>
  Object.entries(document.paths).flatMap(([route, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${route}`,
      operation,
    })),
  );

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended rules without an error", async () => {
    const file = path.join(daemon.dataDir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const linted = await run(REDOCLY, ['lint', file, '--format=json'], {
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stdout: string }) => error);
    const report = JSON.parse(linted.stdout.slice(linted.stdout.indexOf('{'))) as {
      totals: { errors: number };
      problems: { ruleId: string; message: string; severity: string }[];
    };
    expect(report.problems.filter((problem) => problem.severity === 'error')).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });

  it('gives every operation a summary, a description, an operationId, a tag, its credentials and its errors', () => {
    const all = operations();
    expect(all.length).toBeGreaterThanOrEqual(80);
    const ids = new Set<string>();
    for (const { name, operation } of all) {
      expect(operation.summary, name).toEqual(expect.any(String));
      expect(operation.description, name).toEqual(expect.any(String));
      expect(operation.tags, name).toHaveLength(1);
      expect(ids.has(operation.operationId as string), name).toBe(false);
      ids.add(operation.operationId as string);
      expect(Array.isArray(operation.security), name).toBe(true);
      const statuses = Object.keys(operation.responses as object);
      expect(
        statuses.some((status) => /^2/.test(status)),
        name,
      ).toBe(true);
      if (name !== 'GET /health')
        expect(
          statuses.some((status) => /^[45]/.test(status)),
          name,
        ).toBe(true);
    }
  });

  it('gives every operation an example of its success body and of its request body, each valid against its schema', () => {
    type Media = Record<string, { schema?: object; example?: unknown }>;
    const checked: string[] = [];
    for (const { name, operation } of operations()) {
      const responses = operation.responses as Record<string, { content?: Media }>;
      const success = Object.keys(responses).find((status) => /^2/.test(status))!;
      const bodies: [string, Media | undefined][] = [
        [`${name} ${success}`, responses[success].content],
        [`${name} request`, (operation.requestBody as { content: Media } | undefined)?.content],
      ];
      // Only a 204 answers without a body.
      if (success === '204') expect(bodies[0][1], name).toBeUndefined();
      else expect(bodies[0][1], name).toBeDefined();
      for (const [what, content] of bodies) {
        for (const [type, { schema, example }] of Object.entries(content ?? {})) {
          expect(example, `${what} has no example`).toBeDefined();
          expect(schema, what).toBeDefined();
          expect(mismatch(schema!, example), `${what}: the example does not match the ${type} schema`).toBe(
            undefined,
          );
          checked.push(what);
        }
      }
    }
    // Every operation but the 204s checks its success example; every POST and PUT but the bodiless a request.
    expect(checked.length).toBeGreaterThanOrEqual(100);
  });

  it('has no entry for a route the daemon does not have', () => {
    const documented = new Set(operations().map(({ name }) => name.replace(/\{(\w+)\}/g, ':$1')));
    expect(Object.keys(OPERATIONS).filter((key) => !documented.has(key))).toEqual([]);
  });

  it('documents the statuses routes answer and the credentials they take', () => {
    const operation = (method: string, route: string) => document.paths[route][method] as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(Object.keys(operation('post', '/scenarios').responses)).toContain('201');
    expect(Object.keys(operation('delete', '/scenarios/{slug}').responses)).toContain('204');
    expect(operation('post', '/tenants').security).toEqual([{ operatorKey: [] }]);
    expect(operation('get', '/health').security).toEqual([]);
    // The public token only where browsers may call.
    const takesPublic = (method: string, route: string) =>
      (operation(method, route).security as object[]).some((requirement) => 'publicToken' in requirement);
    expect(takesPublic('post', '/recommendations')).toBe(true);
    expect(takesPublic('get', '/recommendations/search')).toBe(true);
    expect(takesPublic('post', '/ingestion/interactions')).toBe(false);
    // X-Tenant-Id goes with every tenant credential, a bearer token too (400 TENANT_REQUIRED without it).
    expect(operation('post', '/ingestion/interactions').security).toContainEqual({
      bearerToken: [],
      tenantId: [],
    });
    for (const { name, operation: each } of operations())
      for (const requirement of each.security as object[])
        if (!('operatorKey' in requirement)) expect(Object.keys(requirement), name).toContain('tenantId');
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(
      ['apiKey', 'bearerToken', 'operatorKey', 'privateToken', 'publicToken', 'tenantId'].sort(),
    );
    const error = operation('post', '/scenarios').responses['409'].content['application/json'].schema;
    expect(error.required).toEqual(['statusCode', 'error', 'code', 'message']);
  });
});

describe('Swagger UI at /docs', () => {
  it('is served from local assets, with the document', async () => {
    const page = await fetch(`${daemon.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    expect(html).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/);
    const bundle = await fetch(`${daemon.url}/docs/static/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const served = (await (await fetch(`${daemon.url}/docs/json`)).json()) as typeof document;
    expect(served.paths).toEqual(document.paths);
  });
});
