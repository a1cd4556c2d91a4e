import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scenarios } from '../../../src/config/resources.js';
import { SCENARIO } from '../../../src/contract/scenarios.js';
import { LocalRanker } from '../../../src/engine/ranker.js';
import { appendInteractions } from '../../../src/ingestion/events.js';
import { upsertItems } from '../../../src/ingestion/items.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import { buildApp } from '../../../src/server/app.js';
import { warmUp, type WarmUpLimits } from '../../../src/server/warm-up.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { setRateLimits } from '../../../src/tenants/rate-limit-service.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';

const OPERATOR_KEY = 'warm-up-operator-key-0123456789';
/** Bounded by requests alone: a budget of time that no run reaches. */
const BY_COUNT: WarmUpLimits = { tenants: 8, requests: 120, budgetMs: 600_000, concurrency: 4, seeds: 4 };

let dir: string;
let runtime: Runtime;
let app: FastifyInstance;
let ranker: LocalRanker;
let tenant: TenantState;
let apiKey: string;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-warm-up-'));
  runtime = await openRuntime(dir);
  apiKey = (await createTenant(runtime, 'shop')).apiKey;
  // A tenant with no item is not warmed up.
  await createTenant(runtime, 'empty');
  tenant = runtime.state.get('shop')!;
  const items = Array.from({ length: 40 }, (_, i) => ({
    externalId: `i${i}`,
    category: i % 2 ? 'shoes' : 'bags',
    attributes: { price: i, brand: i % 3 ? 'Linea' : 'Pace' },
  }));
  await upsertItems(runtime, tenant, items);
  const now = Date.now();
  await appendInteractions(
    runtime,
    tenant,
    Array.from({ length: 200 }, (_, i) => ({
      userId: `u${i % 10}`,
      itemId: `i${(i * 7) % 40}`,
      type: 'view' as const,
      country: i % 2 ? 'DE' : 'FR',
      timestamp: now - i * 60_000,
    })),
  );
  await scenarios.create(
    runtime,
    tenant,
    SCENARIO.parse({ slug: 'cheap', logicType: 'user-to-item', filter: `'price' < 20` }),
  );
  ranker = new LocalRanker();
  app = await buildApp({ runtime, ranker, operatorKey: OPERATOR_KEY, logLevel: 'silent' });
  app.readiness.done('models');
});

afterEach(async () => {
  await app.close();
  await runtime.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const asClient = (url: string) =>
  app.inject({ url, headers: { 'x-tenant-id': 'shop', 'x-api-key': apiKey } });

describe('the warm-up', () => {
  it('is pending in readiness until it is done; clients are answered 503 NOT_READY meanwhile', async () => {
    const refused = await asClient('/recommendations/user-to-item/u1');
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({
      code: 'NOT_READY',
      message: expect.stringContaining('ranking is not warmed up yet'),
      details: [{ stopping: false, checks: { state: 'done', models: 'done', warmup: 'pending' } }],
    });
    await warmUp(app, ranker, BY_COUNT);
    app.readiness.done('warmup');
    expect((await app.inject('/health/ready')).json()).toEqual({
      status: 'ready',
      checks: { state: 'done', models: 'done', warmup: 'done', disk: 'ok' },
    });
    expect((await asClient('/recommendations/user-to-item/u1')).statusCode).toBe(200);
  });

  it('ranks every scenario and logic type of the tenant through the routes, and builds what ranking keeps', async () => {
    const before = tenant.catalog.cached;
    expect(before).toMatchObject({ rendered: 0, attributeColumns: 0 });
    const summary = await warmUp(app, ranker, BY_COUNT);
    // The empty tenant is left out.
    expect(summary).toMatchObject({ tenants: 1, requests: 120 });
    expect(summary.answered).toBe(120);
    const after = tenant.catalog.cached;
    // Items were ranked and rendered as answers show them; the scenario's filter made its column.
    expect(after.rendered).toBeGreaterThan(0);
    expect(after.attributeColumns).toBe(1);
  });

  it('leaves no trace: no answer recorded, nothing in the result cache or the metrics', async () => {
    await warmUp(app, ranker, BY_COUNT);
    app.readiness.done('warmup');
    expect(runtime.answers.held).toBe(0);
    expect(app.recommender.cacheStats()).toEqual({ hits: 0, misses: 0 });
    const metrics = await app.inject({ url: '/metrics', headers: { 'x-api-key': OPERATOR_KEY } });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).not.toContain('route="/recommendations');
    // A client's request is the first the cache sees, and the first the record holds.
    expect((await asClient('/recommendations/user-to-item/u1?count=3')).statusCode).toBe(200);
    expect(app.recommender.cacheStats()).toEqual({ hits: 0, misses: 1 });
    expect(runtime.answers.held).toBeGreaterThan(0);
  });

  it("counts against no rate limit: the tenant's budget is whole for its clients", async () => {
    await setRateLimits(runtime, 'shop', { api: 1 });
    const summary = await warmUp(app, ranker, BY_COUNT);
    expect(summary.answered).toBe(summary.requests);
    app.readiness.done('warmup');
    expect((await asClient('/recommendations/user-to-item/u1')).statusCode).toBe(200);
    expect((await asClient('/recommendations/user-to-item/u1')).statusCode).toBe(429);
  });

  it("is the daemon's alone: a client's request without credentials is refused", async () => {
    await warmUp(app, ranker, BY_COUNT);
    app.readiness.done('warmup');
    const anonymous = await app.inject({
      url: '/recommendations/user-to-item/u1',
      headers: { 'x-tenant-id': 'shop' },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('sends nothing once its time is up, and no more requests than its bound', async () => {
    expect(await warmUp(app, ranker, Object.assign({}, BY_COUNT, { budgetMs: 0 }))).toMatchObject({
      requests: 0,
    });
    expect(tenant.catalog.cached.rendered).toBe(0);
    expect(await warmUp(app, ranker, Object.assign({}, BY_COUNT, { requests: 7 }))).toMatchObject({
      requests: 7,
    });
  });
});
