import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rules, scenarios, segmentations } from '../../../src/config/resources.js';
import { ApiError } from '../../../src/contract/errors.js';
import { SCENARIO, type Scenario } from '../../../src/contract/scenarios.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';

let dir: string;
let runtime: Runtime;
let tenant: TenantState;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-config-'));
  runtime = await openRuntime(dir);
  await createTenant(runtime, 'shop');
  tenant = runtime.state.get('shop')!;
});

afterEach(async () => {
  await runtime.store.close();
  rmSync(dir, { recursive: true, force: true });
});

function scenario(slug: string, fields: Record<string, unknown> = {}): Scenario {
  return SCENARIO.parse({ slug, logicType: 'user-to-item', ...fields });
}

async function rejection(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return (error as ApiError).code;
}

describe('ConfigDocuments', () => {
  it('bumps the config version on every committed change', async () => {
    expect(tenant.config.version).toBe(0);
    await scenarios.create(runtime, tenant, scenario('b'));
    await scenarios.create(runtime, tenant, scenario('a'));
    await scenarios.replace(runtime, tenant, scenario('a', { name: 'A' }));
    await scenarios.remove(runtime, tenant, 'b');
    expect(tenant.config.version).toBe(4);
    expect(scenarios.list(tenant)).toEqual([scenario('a', { name: 'A' })]);
    expect(await rejection(scenarios.remove(runtime, tenant, 'b'))).toBe('SCENARIO_NOT_FOUND');
    expect(tenant.config.version).toBe(4);
  });

  it('decides existence in the order requests were queued, within one flush', async () => {
    const [first, second] = await Promise.allSettled([
      scenarios.create(runtime, tenant, scenario('s', { name: 'first' })),
      scenarios.create(runtime, tenant, scenario('s', { name: 'second' })),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'CONFLICT' } });

    const outcomes = await Promise.allSettled([
      scenarios.remove(runtime, tenant, 's'),
      scenarios.replace(runtime, tenant, scenario('s')),
      scenarios.create(runtime, tenant, scenario('s', { name: 'again' })),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(scenarios.get(tenant, 's').name).toBe('again');
  });

  it('keeps kinds apart and reloads every kind from the store', async () => {
    await scenarios.create(runtime, tenant, scenario('same'));
    await rules.create(runtime, tenant, { slug: 'same', type: 'filter', expression: "'a' = 1", priority: 2 });
    await segmentations.create(runtime, tenant, {
      segmentationId: 'same',
      type: 'property',
      property: 'category',
    });
    await rules.create(runtime, tenant, { slug: 'gone', type: 'filter', expression: "'a' = 1", priority: 0 });
    await rules.remove(runtime, tenant, 'gone');
    await runtime.store.close();

    runtime = await openRuntime(dir);
    const reloaded = runtime.state.get('shop')!;
    expect(scenarios.list(reloaded)).toEqual([scenario('same')]);
    expect(rules.list(reloaded)).toEqual([
      { slug: 'same', type: 'filter', expression: "'a' = 1", priority: 2 },
    ]);
    expect(segmentations.get(reloaded, 'same')).toEqual({
      segmentationId: 'same',
      type: 'property',
      property: 'category',
    });
  });
});

describe('withPathKey', () => {
  it('fills an omitted key from the path and refuses a different one', () => {
    expect(scenarios.withPathKey({ logicType: 'user-to-item' }, 'home')).toEqual({
      slug: 'home',
      logicType: 'user-to-item',
    });
    expect(scenarios.withPathKey({ slug: 'home' }, 'home')).toEqual({ slug: 'home' });
    expect(() => segmentations.withPathKey({ segmentationId: 'a' }, 'b')).toThrow(
      expect.objectContaining({ code: 'INVALID_BODY' }),
    );
    expect(scenarios.withPathKey(['not', 'an', 'object'], 'home')).toEqual(['not', 'an', 'object']);
  });
});
