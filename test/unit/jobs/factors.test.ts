import { afterEach, describe, expect, it } from 'vitest';
import { factorsJob } from '../../../jobs/factors/factors-job.js';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { FACTORS, type Factors } from '../../../src/artifacts/formats.js';
import { applyStateChange } from '../../../src/state/apply-state-change.js';
import { StateChangeLog } from '../../../src/state/state-changes.js';
import { ServingState, type TenantState } from '../../../src/state/tenant-state.js';
import { servingFactors } from '../../../src/state/factor-model.js';
import { SCENARIO } from '../../../src/contract/scenarios.js';
import { addEvents, buildTenant, DAY, item, NOW, rankIds } from '../../support/tenant-fixture.js';

const MF = { slug: 'mf', logicType: 'user-to-item', algorithm: 'matrix-factorization' } as const;

/** Two audiences: users g0..g19 see items a0..a5, users h0..h19 items b0..b5, each user four of six. */
const GROUPS = [
  { users: 'g', items: 'a' },
  { users: 'h', items: 'b' },
];
const EVENTS = GROUPS.flatMap(({ users, items }) =>
  Array.from({ length: 20 }, (_, u) =>
    Array.from({ length: 4 }, (_, k) => ({
      user: `${users}${u}`,
      item: `${items}${(u + k) % 6}`,
      ts: NOW - DAY,
    })),
  ).flat(),
);

let lake: LakeDb | undefined;
afterEach(() => lake?.close());

async function built(): Promise<{ model: Factors; parameters: Record<string, unknown> }> {
  lake = await LakeDb.scratch();
  await lake.appendViews(EVENTS);
  const result = await factorsJob.build(
    lake,
    { ...factorsJob.defaults, factors: 4, iterations: 8, regularization: 0.5, alpha: 10 },
    { now: NOW, threads: 1 },
  );
  const model = FACTORS.decode({
    manifest: { shape: result.shape } as never,
    file: (name) => result.files[name],
  });
  return { model, parameters: result.parameters };
}

function dot(model: Factors, a: string, b: string): number {
  const { factors: k } = model;
  const ra = model.items.indexOf(a) * k;
  const rb = model.items.indexOf(b) * k;
  let sum = 0;
  for (let f = 0; f < k; f++) sum += model.itemFactors[ra + f] * model.itemFactors[rb + f];
  return sum;
}

function shop(model: Factors, parameters: Record<string, unknown>, state = new ServingState()): TenantState {
  const tenant = state.add('t1');
  for (const id of [...'012345'].flatMap((n) => [`a${n}`, `b${n}`])) tenant.upsertItem(item(id));
  tenant.putConfigDocument('scenarios', 'mf', SCENARIO.parse(MF));
  tenant.replaceFactors(servingFactors(model, tenant.catalog, parameters, EVENTS.length, NOW));
  return tenant;
}

describe('factors job and matrix-factorization', () => {
  it('learns factors that keep the two audiences’ items apart, and records the solver and losses', async () => {
    const { model, parameters } = await built();
    expect(model.items).toHaveLength(12);
    expect(model.users).toHaveLength(40);
    expect(dot(model, 'a0', 'a1')).toBeGreaterThan(dot(model, 'a0', 'b1') + 0.1);
    expect(dot(model, 'b2', 'b3')).toBeGreaterThan(dot(model, 'b2', 'a3') + 0.1);
    expect(parameters.solver).toBe('cholesky');
    const losses = parameters.losses as number[];
    expect(losses).toHaveLength(8);
    expect(losses.at(-1)!).toBeLessThan(losses[0]);
  });

  it('folds in a user the model never saw and ranks their audience’s items, not what they have', async () => {
    const { model, parameters } = await built();
    const tenant = shop(model, parameters);
    addEvents(tenant, [
      { user: 'newcomer', item: 'b0' },
      { user: 'newcomer', item: 'b1' },
    ]);
    const ranked = rankIds(tenant, { scenario: 'mf', userId: 'newcomer', count: 4 });
    expect(ranked).toHaveLength(4);
    for (const id of ranked) expect(id).toMatch(/^b[2-5]$/);
  });

  it('falls back to weighted-history’s candidates without a model', () => {
    const tenant = buildTenant({
      items: ['x', 'y', 'z'],
      events: [
        { user: 'u', item: 'x' },
        { user: 'v', item: 'x' },
        { user: 'v', item: 'y' },
      ],
      neighbours: [['x', 'y', 1]],
      scenarios: [MF],
    });
    expect(tenant.factors).toBeUndefined();
    expect(rankIds(tenant, { scenario: 'mf', userId: 'u', count: 2 })).toEqual(
      rankIds(tenant, { logicType: 'user-to-item', userId: 'u', count: 2 }),
    );
  });

  it('reaches the ranking thread’s replica as a state change', async () => {
    const { model, parameters } = await built();
    const log = new StateChangeLog({ pending: () => undefined, full: () => undefined });
    const original = shop(model, parameters, new ServingState(log));
    addEvents(original, [{ user: 'u', item: 'a0' }]);
    const replica = new ServingState(undefined, true);
    for (const change of log.take()) applyStateChange(replica, change);
    const copy = replica.get('t1')!;
    expect(Array.from(copy.factors!.itemFactors)).toEqual(Array.from(original.factors!.itemFactors));
    const body = { scenario: 'mf', userId: 'u', count: 5 };
    expect(rankIds(copy, body)).toEqual(rankIds(original, body));
    expect(rankIds(copy, body)[0]).toMatch(/^a/);
  });
});
