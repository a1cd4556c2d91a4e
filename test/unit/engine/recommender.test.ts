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

const parse = (body: Buffer) =>
  JSON.parse(body.toString()) as { items: { itemId: string }[]; recommId: string };

describe('Recommender.plan', () => {
  it('leaves the ranking to the caller on a miss, and answers from the cache once it ran', () => {
    const tenant = tenantOf();
    const recommender = new Recommender(OPTIONS);
    const pdp = request({ logicType: 'item-to-item', itemId: 'a' });
    const miss = recommender.plan(tenant, pdp);
    expect(typeof miss).toBe('function');
    // Nothing is cached before the work runs.
    expect(typeof recommender.plan(tenant, pdp)).toBe('function');
    const ranked = parse((miss as () => Buffer)());
    const hit = recommender.plan(tenant, pdp);
    expect(Buffer.isBuffer(hit)).toBe(true);
    expect(parse(hit as Buffer).items).toEqual(ranked.items);
    expect(ranked.items.length).toBeGreaterThan(0);
    expect(parse(hit as Buffer).recommId).not.toBe(ranked.recommId);
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
    expect(() => (unknown as () => Buffer)()).toThrow(expect.objectContaining({ code: 'ITEM_NOT_FOUND' }));
    expect(() =>
      recommender.plan(
        tenant,
        request({ logicType: 'item-to-item', itemId: 'a', includedProperties: ['attributes.__proto__'] }),
      ),
    ).toThrow(expect.objectContaining({ code: 'UNSAFE_PATH' }));
  });
});
