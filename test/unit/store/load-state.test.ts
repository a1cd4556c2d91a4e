import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendInteractions } from '../../../src/ingestion/events.js';
import { upsertItems } from '../../../src/ingestion/items.js';
import { upsertUsers } from '../../../src/ingestion/users.js';
import { openRuntime } from '../../../src/runtime.js';
import { ServingState } from '../../../src/state/tenant-state.js';
import { loadState } from '../../../src/state/load-state.js';
import { duckDbLoadReads } from '../../../src/store/duckdb/load.js';
import { DAY_MS, TYPE_CODES } from '../../../src/state/user-histories.js';
import { updateTenantSettings } from '../../../src/tenants/settings-service.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';
import { duckDbStoreOf } from '../../support/store-file.js';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('serving state rebuilt from the store', () => {
  it('restores items, users, credentials, settings, event ids and windowed histories', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-load-'));
    dirs.push(dir);
    const ago = (days: number) => Date.now() - days * DAY_MS;

    const first = await openRuntime(dir);
    const credentials = await createTenant(first, 'shop');
    const tenant = first.state.get('shop')!;
    await upsertItems(first, tenant, [
      { externalId: 'a', category: 'c1', attributes: { price: 1 } },
      { externalId: 'b' },
    ]);
    await upsertUsers(first, tenant, [{ externalId: 'u1', attributes: { tier: 'gold' } }]);
    await updateTenantSettings(first, tenant, { userProvisioningModes: ['on_identity_merge'] });
    await appendInteractions(first, tenant, [
      { userId: 'u1', itemId: 'a', type: 'view', timestamp: ago(1), eventId: 'e1', country: 'de' },
      { userId: 'u1', itemId: 'b', type: 'view', timestamp: ago(45) },
      { userId: 'u1', itemId: 'b', type: 'purchase', timestamp: ago(60) },
      { userId: 'u1', itemId: 'a', type: 'purchase', timestamp: ago(120) },
      { sessionId: 'sess_1', itemId: 'ghost', type: 'cart', timestamp: ago(2) },
    ]);
    await first.store.close();

    const second = await openRuntime(dir);
    dirs.push(dir);
    try {
      const restored = second.state.get('shop')!;
      expect(second.credentials.verify(credentials.apiKey)).toMatchObject({ tenantId: 'shop', kind: 'api' });
      expect(restored.catalog.itemCount).toBe(2);
      expect(restored.catalog.get('a')).toMatchObject({
        category: 'c1',
        attributes: { price: 1 },
        available: true,
      });
      expect(restored.users.get('u1')?.attributes).toEqual({ tier: 'gold' });
      expect(restored.settings.userProvisioningModes).toEqual(['on_identity_merge']);
      expect(restored.interactionEventIds.has('e1')).toBe(true);

      const kept = restored.histories
        .get('u1')!
        .events()
        .map((event) => [restored.catalog.externalIds[event.item], event.type]);
      // The 45-day view and the 120-day purchase fell out of their windows.
      expect(kept).toEqual([
        ['b', TYPE_CODES.purchase],
        ['a', TYPE_CODES.view],
      ]);
      // The view from DE counts in the geo counters of the last 7 days.
      const de = restored.countries.find('DE');
      expect(de).not.toBe(0);
      expect(restored.geoCounts.countryCount(de, restored.catalog.idOf('a'))).toBe(1);
      // An item known only from events gets an id but is not in the catalog.
      const ghost = restored.catalog.idOf('ghost');
      expect(ghost).toBeGreaterThanOrEqual(0);
      expect(restored.catalog.document(ghost)).toBeUndefined();
      expect(restored.histories.get('sess_1')?.length).toBe(1);
    } finally {
      await second.store.close();
    }
  });
});

describe('histories loaded a run of days at a time', () => {
  it('are the same, in time order, however few rows one query sorts', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-load-runs-'));
    dirs.push(dir);
    const runtime = await openRuntime(dir);
    try {
      const tenant = runtime.state.get((await createTenant(runtime, 'shop')).tenantId)!;
      const at = (days: number, hour: number) => Date.now() - days * DAY_MS - hour * 3_600_000;
      // Sent out of time order, over five days, some days with several events.
      await appendInteractions(runtime, tenant, [
        { userId: 'u1', itemId: 'c', type: 'view', timestamp: at(1, 2) },
        { userId: 'u1', itemId: 'a', type: 'view', timestamp: at(5, 1) },
        { userId: 'u2', itemId: 'b', type: 'cart', timestamp: at(3, 4) },
        { userId: 'u1', itemId: 'b', type: 'view', timestamp: at(3, 1) },
        { userId: 'u1', itemId: 'd', type: 'purchase', timestamp: at(40, 0) },
        { userId: 'u2', itemId: 'a', type: 'view', timestamp: at(1, 5) },
        { userId: 'u1', itemId: 'e', type: 'view', timestamp: at(3, 6) },
      ]);
      const histories = async (rowsPerQuery: number) => {
        const state = new ServingState();
        const store = duckDbStoreOf(runtime.store);
        const load = duckDbLoadReads((query) => store.read(query), rowsPerQuery);
        await loadState({ tenants: store.tenants, load }, state, [], Date.now());
        const shop = state.get('shop')!;
        return ['u1', 'u2'].map((user) =>
          shop.histories
            .get(user)!
            .events()
            .map((event) => shop.catalog.externalIds[event.item]),
        );
      };
      const expected = [
        ['d', 'a', 'e', 'b', 'c'],
        ['b', 'a'],
      ];
      expect(await histories(1)).toEqual(expected);
      expect(await histories(3)).toEqual(expected);
      expect(await histories(100_000)).toEqual(expected);
    } finally {
      await runtime.store.close();
    }
  });
});
