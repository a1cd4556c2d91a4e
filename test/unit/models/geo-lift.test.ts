import { describe, expect, it } from 'vitest';
import { geoLiftFor } from '../../../src/models/geo-lift.js';
import { TenantState } from '../../../src/state/tenant-state.js';
import type { StoredInteraction } from '../../../src/store/rows.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

function tenantWith(events: [item: string, country: string | null, times: number][]): TenantState {
  const tenant = new TenantState('t');
  for (const id of ['a', 'b', 'c', 'd']) {
    tenant.catalog.upsert({
      externalId: id,
      category: null,
      attributes: {},
      expiresAt: null,
      available: true,
      feedManaged: false,
      createdAt: NOW,
      updatedAt: NOW,
    });
  }
  let n = 0;
  for (const [itemId, country, times] of events) {
    for (let i = 0; i < times; i++) {
      const event: StoredInteraction = {
        eventId: null,
        userId: `u${n++}`,
        sessionId: null,
        itemId,
        type: 'view',
        weight: 1,
        scenarioSlug: null,
        country,
        ts: NOW - 1000,
        receivedAt: NOW,
      };
      tenant.recordInteraction(event, NOW);
    }
  }
  return tenant;
}

describe('geo lift v1', () => {
  it('uses the smoothed formula over the country when it has 50 events or more', () => {
    const tenant = tenantWith([
      ['a', 'DE', 40],
      ['b', 'DE', 10],
      ['a', 'US', 10],
      ['b', 'US', 90],
    ]);
    const lift = geoLiftFor(tenant, 'de', NOW)!;
    expect(lift.scope).toBe('DE');
    const I = 4;
    const expectedA = (40 + 1) / (50 + I) / ((50 + 1) / (150 + I));
    const expectedC = (0 + 1) / (50 + I) / ((0 + 1) / (150 + I));
    expect(lift.lift(tenant.catalog.idOf('a'))).toBeCloseTo(expectedA, 12);
    expect(lift.lift(tenant.catalog.idOf('c'))).toBeCloseTo(expectedC, 12);
    expect(lift.lift(tenant.catalog.idOf('a'))).toBeGreaterThan(1);
    expect(lift.lift(tenant.catalog.idOf('b'))).toBeLessThan(1);
  });

  it('borrows the cluster when the country has fewer than 50 events, and gives up below that too', () => {
    const tenant = tenantWith([
      ['a', 'AT', 5],
      ['a', 'DE', 30],
      ['b', 'FR', 20],
      ['c', 'US', 100],
    ]);
    const lift = geoLiftFor(tenant, 'AT', NOW)!;
    expect(lift.scope).toBe('cluster:western-europe');
    const I = 4;
    expect(lift.lift(tenant.catalog.idOf('a'))).toBeCloseTo((35 + 1) / (55 + I) / ((35 + 1) / (155 + I)), 12);
    // Northern Europe has no events at all: no lift.
    expect(geoLiftFor(tenant, 'SE', NOW)).toBeUndefined();
  });

  it('skips invalid countries and OTH', () => {
    const tenant = tenantWith([['a', 'US', 100]]);
    expect(geoLiftFor(tenant, 'OTH', NOW)).toBeUndefined();
    expect(geoLiftFor(tenant, 'Germany', NOW)).toBeUndefined();
    expect(geoLiftFor(tenant, undefined, NOW)).toBeUndefined();
    expect(geoLiftFor(tenant, 'us', NOW)?.scope).toBe('US');
  });
});
