import { describe, expect, it, vi } from 'vitest';
import { RULE, SCENARIO } from '../../../src/contract/scenarios.js';
import { applyStateChange } from '../../../src/state/apply-state-change.js';
import { FULL_ROWS, StateChangeLog } from '../../../src/state/state-changes.js';
import { catalogItem } from '../../../src/state/item-catalog.js';
import { ServingState, type TenantState } from '../../../src/state/tenant-state.js';
import {
  addEvents,
  daysAgo,
  item,
  neighboursOf,
  NOW,
  rank,
  type RequestBody,
  upsertShoesAndBags,
} from '../../support/tenant-fixture.js';

function recordedState() {
  const listener = { pending: vi.fn(), full: vi.fn() };
  const log = new StateChangeLog(listener);
  return { state: new ServingState(log), log, listener };
}

function replayed(log: StateChangeLog): ServingState {
  const replica = new ServingState(undefined, true);
  for (const change of log.take()) applyStateChange(replica, change);
  return replica;
}

function historyOf(tenant: TenantState, identity: string) {
  return tenant.histories
    .get(identity)!
    .events()
    .map((event) => [tenant.catalog.externalIds[event.item], event.type, event.ts]);
}

describe('state changes', () => {
  it('rebuild a state that ranks alike, under the same dense ids', () => {
    const { state, log } = recordedState();
    const tenant = state.add('shop');
    // Events may name items before the catalog has them (placeholder ids); one outside every window
    // gets no id at all.
    addEvents(tenant, [
      { item: 'ghost', user: 'u1', ts: daysAgo(2), country: 'DE' },
      { item: 'forgotten', user: 'u1', ts: daysAgo(200) },
    ]);
    upsertShoesAndBags(tenant);
    addEvents(tenant, [
      { item: 'a', user: 'u1', ts: daysAgo(1) },
      { item: 'c', user: 'u2', type: 'purchase', ts: daysAgo(3), country: 'FR' },
      { item: 'd', times: 3 },
    ]);
    tenant.replaceNeighbours(
      neighboursOf(tenant, [
        ['a', 'b', 0.5],
        ['a', 'c', 0.25],
        ['c', 'd', 0.4],
      ]),
    );
    tenant.putConfigDocument(
      'scenarios',
      'pdp',
      SCENARIO.parse({ slug: 'pdp', logicType: 'item-to-item', filter: `'price' > 15` }),
    );
    tenant.putConfigDocument(
      'rules',
      'cheap',
      RULE.parse({ slug: 'cheap', type: 'filter', expression: `'price' < 35` }),
    );
    tenant.removeConfigDocument('rules', 'cheap');
    tenant.replaceSettings({
      ...tenant.settings,
      freshness: { ...tenant.settings.freshness, keyPath: 'attributes.addedAt' },
    });
    tenant.upsertItem(
      item('b', { category: 'shoes', attributes: { name: 'B', price: 20 }, available: false }),
    );
    state.add('other').upsertItem(item('z'));

    const replica = replayed(log);
    const copy = replica.get('shop')!;
    expect(copy.catalog.externalIds).toEqual(['ghost', 'a', 'b', 'c', 'd']);
    expect(copy.catalog.externalIds).toEqual(tenant.catalog.externalIds);
    for (let id = 0; id < tenant.catalog.size; id++) {
      expect(copy.catalog.document(id)).toEqual(tenant.catalog.document(id));
    }
    expect(copy.settings).toEqual(tenant.settings);
    expect([...copy.config.scenarios]).toEqual([...tenant.config.scenarios]);
    expect(copy.config.rules.size).toBe(0);
    expect(copy.neighbours.offsets).toEqual(tenant.neighbours.offsets);
    expect(copy.neighbours.neighbours).toEqual(tenant.neighbours.neighbours);
    expect(copy.neighbours.weights).toEqual(tenant.neighbours.weights);
    for (const identity of ['u1', 'u2'])
      expect(historyOf(copy, identity)).toEqual(historyOf(tenant, identity));
    for (const country of ['DE', 'FR']) {
      const code = tenant.countries.find(country);
      expect(copy.countries.find(country)).toBe(code);
      expect(copy.geoCounts.countryTotal(code)).toBe(tenant.geoCounts.countryTotal(code));
    }
    const bodies: RequestBody[] = [
      { scenario: 'pdp', itemId: 'a' },
      { logicType: 'item-to-item', itemId: 'c', country: 'FR' },
      { logicType: 'user-to-item', userId: 'u1', country: 'DE' },
      { logicType: 'recently-viewed', userId: 'u1' },
    ];
    for (const body of bodies) expect(rank(copy, body, NOW)).toEqual(rank(tenant, body, NOW));
    expect(rank(copy, bodies[0], NOW).ids).not.toContain(copy.catalog.idOf('b'));
    expect(replica.get('other')!.catalog.externalIds).toEqual(['z']);
    expect(replica.ids()).toEqual(['other', 'shop']);
  });

  it('take a deleted item out of both states alike; the same id upserted again is a new item', () => {
    const { state, log } = recordedState();
    const tenant = state.add('shop');
    upsertShoesAndBags(tenant);
    addEvents(tenant, [
      { item: 'a', user: 'u1', ts: daysAgo(1) },
      { item: 'b', user: 'u1', ts: daysAgo(1) },
      { item: 'c', user: 'u2', ts: daysAgo(2) },
    ]);
    tenant.replaceNeighbours(
      neighboursOf(tenant, [
        ['a', 'b', 0.5],
        ['c', 'b', 0.4],
      ]),
    );
    const items = tenant.catalog.itemCount;
    const b = tenant.catalog.idOf('b');
    expect(rank(tenant, { logicType: 'item-to-item', itemId: 'a' }, NOW).ids).toContain(b);

    expect(tenant.removeItems(['b', 'never-known'])).toEqual([b]);
    expect(tenant.catalog.holds('b')).toBe(false);
    expect(tenant.catalog.idOf('b')).toBe(-1);
    expect(tenant.catalog.itemCount).toBe(items - 1);
    expect(tenant.catalog.externalIds[b]).toBe('');
    expect(tenant.catalog.document(b)).toBeUndefined();
    for (const body of [
      { logicType: 'item-to-item', itemId: 'a' },
      { logicType: 'user-to-item', userId: 'u1' },
      { logicType: 'recently-viewed', userId: 'u1' },
    ] as RequestBody[])
      expect(rank(tenant, body, NOW).ids).not.toContain(b);

    tenant.upsertItem(item('b', { category: 'bags' }));
    const again = tenant.catalog.idOf('b');
    expect(again).not.toBe(b);
    expect(tenant.catalog.externalIds[b]).toBe('');

    const copy = replayed(log).get('shop')!;
    expect(copy.catalog.externalIds).toEqual(tenant.catalog.externalIds);
    expect(copy.catalog.idOf('b')).toBe(again);
    expect(copy.catalog.itemCount).toBe(tenant.catalog.itemCount);
    for (let id = 0; id < tenant.catalog.size; id++)
      expect(copy.catalog.document(id)).toEqual(tenant.catalog.document(id));
  });

  it('tell a replica of an interaction only when it brings a new item, country or history', () => {
    const { state, log } = recordedState();
    const tenant = state.add('shop');
    upsertShoesAndBags(tenant);
    addEvents(tenant, [{ item: 'a', user: 'u1', ts: daysAgo(3), country: 'DE' }]);
    const replica = replayed(log);
    const copy = replica.get('shop')!;
    const told = () =>
      log.take().flatMap((change) => {
        if (change.kind !== 'interactions') return [];
        applyStateChange(replica, change);
        return change.rows.itemIds.map((itemId, i) => [
          itemId,
          change.rows.identities[i],
          change.rows.countries[i],
        ]);
      });
    // A known item, user and country: the replica reads the event from the shared histories and counters.
    addEvents(tenant, [{ item: 'b', user: 'u1', ts: daysAgo(2), country: 'DE' }]);
    expect(told()).toEqual([]);
    addEvents(tenant, [
      { item: 'a', user: 'u2', ts: daysAgo(2) },
      { item: 'ghost', user: 'u1', ts: daysAgo(2) },
      { item: 'c', user: 'u1', ts: daysAgo(1), country: 'FR' },
      { item: 'c', user: 'u2', ts: daysAgo(1), country: 'FR' },
    ]);
    expect(told()).toEqual([
      ['a', 'u2', null],
      ['ghost', 'u1', null],
      ['c', 'u1', 'FR'],
    ]);
    expect(copy.catalog.externalIds).toEqual(tenant.catalog.externalIds);
    expect(copy.countries.find('FR')).toBe(tenant.countries.find('FR'));
    for (const identity of ['u1', 'u2'])
      expect(historyOf(copy, identity)).toEqual(historyOf(tenant, identity));
    for (const body of [
      { logicType: 'user-to-item', userId: 'u2', country: 'FR' },
      { logicType: 'recently-viewed', userId: 'u1' },
    ] satisfies RequestBody[])
      expect(rank(copy, body, NOW)).toEqual(rank(tenant, body, NOW));
  });

  it('share a change between consecutive rows of one kind and tenant, and say when the log fills', () => {
    const { state, log, listener } = recordedState();
    const shop = state.add('shop');
    const other = state.add('other');
    expect(listener.pending).toHaveBeenCalledTimes(1);
    shop.upsertItem(item('a'));
    shop.upsertItem(item('b'));
    other.upsertItem(item('a'));
    shop.upsertItem(item('c'));
    addEvents(shop, [{ item: 'a' }, { item: 'b' }]);
    addEvents(shop, [{ item: 'c' }], NOW + 1);
    expect(
      log.take().map((change) => {
        if (change.kind === 'items') return [change.kind, change.tenantId, change.items.length];
        if (change.kind === 'interactions') return [change.kind, change.tenantId, change.rows.itemIds.length];
        return [change.kind, change.tenantId];
      }),
    ).toEqual([
      // A new tenant's histories and counts are shared with the replica (memory both threads read) at once.
      ['tenant', 'shop'],
      ['histories', 'shop'],
      ['counts', 'shop'],
      ['counts', 'shop'],
      ['tenant', 'other'],
      ['histories', 'other'],
      ['counts', 'other'],
      ['counts', 'other'],
      ['items', 'shop', 2],
      ['items', 'other', 1],
      ['items', 'shop', 1],
      ['interactions', 'shop', 2],
      ['interactions', 'shop', 1],
    ]);
    expect(listener.full).not.toHaveBeenCalled();

    shop.replaceSettings({ ...shop.settings });
    expect(listener.pending).toHaveBeenCalledTimes(2);
    for (let i = 0; i < FULL_ROWS; i++) shop.upsertItem(item(`bulk-${i}`));
    expect(listener.full).toHaveBeenCalledTimes(1);
    expect(log.take()).toHaveLength(2);
    expect(log.take()).toEqual([]);
  });

  it('refuse to apply to a replica that lacks the tenant', () => {
    expect(() =>
      applyStateChange(new ServingState(), {
        kind: 'items',
        tenantId: 'shop',
        items: [catalogItem(item('a'))],
      }),
    ).toThrow(/unknown tenant 'shop'/);
  });
});
