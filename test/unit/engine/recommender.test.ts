import { describe, expect, it } from 'vitest';
import { Recommender } from '../../../src/engine/recommender.js';
import { buildTenant, request } from '../../support/tenant-fixture.js';

const OPTIONS = { maxBytes: 1024 * 1024, ttlMs: 60_000 };

function tenantOf() {
  return buildTenant({
    items: ['a', 'b', 'c'],
    events: [
      { item: 'a', user: 'u1' },
      { item: 'b', user: 'u1' },
      { item: 'a', user: 'u2' },
      { item: 'c', user: 'u2' },
    ],
  });
}

const ids = (body: string) =>
  (JSON.parse(body) as { items: { itemId: string }[] }).items.map((i) => i.itemId);

describe('Recommender.plan', () => {
  it('leaves the ranking to the caller on a miss, and answers from the cache once it ran', () => {
    const tenant = tenantOf();
    const recommender = new Recommender(OPTIONS);
    const pdp = request({ logicType: 'item-to-item', itemId: 'a' });
    const miss = recommender.plan(tenant, pdp);
    expect(typeof miss).toBe('function');
    // Nothing is cached before the work runs.
    expect(typeof recommender.plan(tenant, pdp)).toBe('function');
    const ranked = (miss as () => string)();
    const hit = recommender.plan(tenant, pdp);
    expect(typeof hit).toBe('string');
    expect(ids(hit as string)).toEqual(ids(ranked));
    expect(JSON.parse(hit as string).recommId).not.toBe(JSON.parse(ranked).recommId);
  });

  it('never answers a noCache request from the cache', () => {
    const tenant = tenantOf();
    const recommender = new Recommender(OPTIONS);
    recommender.recommend(tenant, request({ logicType: 'item-to-item', itemId: 'a' }));
    const planned = recommender.plan(
      tenant,
      request({ logicType: 'item-to-item', itemId: 'a', noCache: true }),
    );
    expect(typeof planned).toBe('function');
  });

  it('throws request errors from the work it hands back, or at once for the projection', () => {
    const tenant = tenantOf();
    const recommender = new Recommender(OPTIONS);
    const unknown = recommender.plan(tenant, request({ logicType: 'item-to-item', itemId: 'zz' }));
    expect(() => (unknown as () => string)()).toThrow(expect.objectContaining({ code: 'ITEM_NOT_FOUND' }));
    expect(() =>
      recommender.plan(
        tenant,
        request({ logicType: 'item-to-item', itemId: 'a', includedProperties: ['attributes.__proto__'] }),
      ),
    ).toThrow(expect.objectContaining({ code: 'UNSAFE_PATH' }));
  });
});
