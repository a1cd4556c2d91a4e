import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { AnswerSummary } from '../../../src/engine/answer-summary.js';
import { ResultCache } from '../../../src/engine/result-cache.js';
import { ItemNeighbours } from '../../../src/state/item-neighbours.js';
import { fullCollection } from '../../../src/state/memory.js';
import { GEO_WINDOW_MS } from '../../../src/state/tenant-state.js';
import {
  addEvents,
  buildTenant,
  item,
  NOW,
  request,
  type RequestBody,
} from '../../support/tenant-fixture.js';

const OPTIONS = { maxBytes: 1024 * 1024, ttlMs: 60_000 };
/** The summary of an answer of no items. */
const NO_ITEMS: Required<AnswerSummary> = {
  itemIds: [],
  ids: [],
  algorithm: 'popularity',
  scenario: '',
  experiment: '',
};

/** A rendered answer of `length` characters. */
function body(length = 40): string {
  return `{"items":[${'0'.repeat(length - 10)}]`;
}

function tenantOf() {
  return buildTenant({
    items: ['a', 'b'],
    events: [{ item: 'a', user: 'u' }],
    scenarios: [
      { slug: 'pdp', logicType: 'item-to-item' },
      { slug: 'history', logicType: 'recently-viewed' },
    ],
  });
}

describe('ResultCache.key', () => {
  const tenant = tenantOf();
  const cache = new ResultCache(OPTIONS);
  const key = (body: RequestBody, projection = 'full') => cache.key(tenant, request(body), projection);
  const segments = (body: RequestBody) => key(body).split('\u0000');
  const pdp: RequestBody = { scenario: 'pdp', itemId: 'a' };

  it.each<[RequestBody['logicType'], RequestBody]>([
    ['user-to-item', { userId: 'u' }],
    ['item-to-item', { itemId: 'a' }],
    ['items-to-items', { itemIds: ['a'] }],
    ['similar-products', { itemId: 'a' }],
  ])('%s: the country segment is the ISO code, or `_global_`', (logicType, seed) => {
    expect(segments({ logicType, ...seed, country: 'DE' })).toContain('DE');
    expect(segments({ logicType, ...seed })).toContain('_global_');
    expect(key({ logicType, ...seed, country: 'de' })).toBe(key({ logicType, ...seed, country: 'DE' }));
    for (const country of ['OTH', 'XX', 'DEU']) {
      expect(key({ logicType, ...seed, country })).toBe(key({ logicType, ...seed }));
    }
    expect(key({ logicType, ...seed, country: 'FR' })).not.toBe(key({ logicType, ...seed, country: 'DE' }));
  });

  it('recently-viewed ignores country, by logicType or by scenario', () => {
    const byLogic: RequestBody = { logicType: 'recently-viewed', userId: 'u' };
    expect(key({ ...byLogic, country: 'DE' })).toBe(key(byLogic));
    expect(segments({ ...byLogic, country: 'DE' })).not.toContain('DE');
    expect(segments(byLogic)).not.toContain('_global_');
    const byScenario: RequestBody = { scenario: 'history', userId: 'u' };
    expect(key({ ...byScenario, country: 'DE' })).toBe(key({ ...byScenario, country: 'FR' }));
    expect(segments({ ...byScenario, country: 'DE' })).not.toContain('DE');
  });

  it('adds a hash of the overrides only when one is sent', () => {
    const plain = segments(pdp);
    const overridden = segments({ ...pdp, filter: `'price' < 10` });
    expect(plain.at(-1)).toBe('');
    expect(overridden.at(-1)).not.toBe('');
    expect(overridden.slice(0, -1)).toEqual(plain.slice(0, -1));
  });

  it('different overrides get different keys; the same overrides the same key', () => {
    const keys = [
      key(pdp),
      key({ ...pdp, filter: `'price' < 10` }),
      key({ ...pdp, filter: `'price' < 20` }),
      key({ ...pdp, filter: null }),
      key({ ...pdp, boosters: [] }),
      key({ ...pdp, rulesSlugs: ['x'] }),
      key({ ...pdp, segmentationId: 'seg' }),
      key({ ...pdp, itemsPerSegment: null }),
      key({ ...pdp, autoRelaxFilters: false }),
      key({ ...pdp, relaxEntireFilterOnEmpty: true }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(key({ ...pdp, filter: `'price' < 10` })).toBe(key({ ...pdp, filter: `'price' < 10` }));
  });

  it('differs by tenant, placement, seeds, count and projection, but not by noCache', () => {
    const other = buildTenant({
      tenantId: 't2',
      items: ['a'],
      scenarios: [{ slug: 'pdp', logicType: 'item-to-item' }],
    });
    expect(cache.key(other, request(pdp), 'full')).not.toBe(key(pdp));
    expect(key({ logicType: 'item-to-item', itemId: 'a' })).not.toBe(key(pdp));
    expect(key({ ...pdp, itemId: 'b' })).not.toBe(key(pdp));
    expect(key({ ...pdp, userId: 'u' })).not.toBe(key(pdp));
    expect(key({ ...pdp, count: 3 })).not.toBe(key(pdp));
    expect(key(pdp, 'lean')).not.toBe(key(pdp));
    expect(key({ ...pdp, noCache: true })).toBe(key(pdp));
  });
});

describe('ResultCache entries', () => {
  it('returns the stored list while nothing it depends on changed', () => {
    const tenant = tenantOf();
    const cache = new ResultCache(OPTIONS);
    const stored = body();
    cache.set('k', cache.stamp(tenant, undefined, NOW), stored, NO_ITEMS);
    expect(cache.get('k', tenant, NOW)).toBe(stored);
    expect(cache.get('other', tenant, NOW)).toBeUndefined();
  });

  it.each<[string, string, (tenant: ReturnType<typeof tenantOf>) => void]>([
    ['the catalog changes', 'u', (tenant) => tenant.catalog.upsert(item('c'))],
    ['the configuration changes', 'u', (tenant) => tenant.config.version++],
    ['the tenant settings are replaced', 'u', (tenant) => tenant.replaceSettings({ ...tenant.settings })],
    ['a new neighbour model is installed', 'u', (tenant) => tenant.replaceNeighbours(ItemNeighbours.empty())],
    ["the requesting user's history changes", 'u', (tenant) => addEvents(tenant, [{ item: 'b', user: 'u' }])],
    ["a new user's first event arrives", 'new', (tenant) => addEvents(tenant, [{ item: 'b', user: 'new' }])],
  ])('is stale once %s', (_change, identity, change) => {
    const tenant = tenantOf();
    const cache = new ResultCache(OPTIONS);
    cache.set('k', cache.stamp(tenant, identity, NOW), body(), NO_ITEMS);
    change(tenant);
    expect(cache.get('k', tenant, NOW)).toBeUndefined();
  });

  it('keeps no model or settings it was ranked with alive: a stale entry would hold every version', async () => {
    const tenant = tenantOf();
    const cache = new ResultCache(OPTIONS);
    const versions: WeakRef<object>[] = [];
    for (let i = 0; i < 3; i++) {
      tenant.replaceNeighbours(ItemNeighbours.empty());
      tenant.replaceSettings({ ...tenant.settings });
      versions.push(new WeakRef(tenant.neighbours), new WeakRef(tenant.settings));
      cache.set(`k${i}`, cache.stamp(tenant, undefined, NOW), body(), NO_ITEMS);
    }
    // WeakRefs hold their targets until the job that made them ends.
    await sleep(0);
    fullCollection()();
    // The current ones are alive (the tenant holds them); every earlier one was collected.
    expect(versions.map((ref) => ref.deref() !== undefined)).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
    expect(cache.get('k2', tenant, NOW)).toBeDefined();
    expect(cache.get('k1', tenant, NOW)).toBeUndefined();
  });

  it("outlives other users' events (geo counters, popularity) by at most a second", () => {
    const tenant = tenantOf();
    const cache = new ResultCache(OPTIONS);
    const stored = body();
    cache.set('k', cache.stamp(tenant, 'u', NOW), stored, NO_ITEMS);
    cache.set('anonymous', cache.stamp(tenant, undefined, NOW), stored, NO_ITEMS);
    addEvents(tenant, [{ item: 'b', user: 'someone-else' }, { item: 'b' }]);
    expect(cache.get('k', tenant, NOW + 999)).toBe(stored);
    expect(cache.get('anonymous', tenant, NOW + 999)).toBe(stored);
    expect(cache.get('k', tenant, NOW + 1000)).toBeUndefined();
    expect(cache.get('anonymous', tenant, NOW + 1000)).toBeUndefined();
  });

  it('stays fresh past a second when no counter changed', () => {
    const tenant = tenantOf();
    const cache = new ResultCache(OPTIONS);
    const stored = body();
    cache.set('k', cache.stamp(tenant, undefined, NOW), stored, NO_ITEMS);
    expect(cache.get('k', tenant, NOW + 30_000)).toBe(stored);
  });

  it('is stale a second after an event left the geo window, though nothing read the counters since', () => {
    const tenant = tenantOf();
    const cache = new ResultCache(OPTIONS);
    addEvents(tenant, [{ item: 'b', ts: NOW - GEO_WINDOW_MS + 10_000 }]);
    cache.set('k', cache.stamp(tenant, undefined, NOW), body(), NO_ITEMS);
    expect(cache.get('k', tenant, NOW + 5_000)).toBeDefined();
    expect(cache.get('k', tenant, NOW + 20_000)).toBeUndefined();
  });

  it('entries expire after ttlMs', async () => {
    const tenant = tenantOf();
    const cache = new ResultCache({ maxBytes: OPTIONS.maxBytes, ttlMs: 20 });
    cache.set('k', cache.stamp(tenant, undefined, NOW), body(), NO_ITEMS);
    await sleep(60);
    expect(cache.get('k', tenant, NOW)).toBeUndefined();
  });

  it('holds expired entries until purged, and purging drops only those', async () => {
    const tenant = tenantOf();
    const cache = new ResultCache({ maxBytes: OPTIONS.maxBytes, ttlMs: 200 });
    for (const key of ['a', 'b', 'c']) cache.set(key, cache.stamp(tenant, undefined, NOW), body(), NO_ITEMS);
    await sleep(400);
    cache.set('fresh', cache.stamp(tenant, undefined, NOW), body(), NO_ITEMS);
    // Nothing asked for the expired three: lru-cache alone would keep them until evicted.
    expect(cache.size).toBe(4);
    cache.purgeStale();
    expect(cache.size).toBe(1);
    expect(cache.get('fresh', tenant, NOW)).toBeDefined();
  });

  it('the least recently used entries go when maxBytes is exceeded', () => {
    const tenant = tenantOf();
    // Each entry weighs 256 + 2 bytes per character of key and body, and 160 for a summary of no items:
    // 256 + 2 × (1 + 150) + 160 = 718 bytes; two fit.
    const cache = new ResultCache({ maxBytes: 1600, ttlMs: 60_000 });
    const ten = body(150);
    cache.set('a', cache.stamp(tenant, undefined, NOW), ten, NO_ITEMS);
    cache.set('b', cache.stamp(tenant, undefined, NOW), ten, NO_ITEMS);
    cache.get('a', tenant, NOW);
    cache.set('c', cache.stamp(tenant, undefined, NOW), ten, NO_ITEMS);
    expect(cache.get('b', tenant, NOW)).toBeUndefined();
    expect(cache.get('a', tenant, NOW)).toBe(ten);
    expect(cache.get('c', tenant, NOW)).toBe(ten);
  });
});
