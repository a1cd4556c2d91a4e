import { describe, expect, it } from 'vitest';
import {
  attachUserContext,
  expressionContext,
  userContextKey,
} from '../../../src/engine/expression-context.js';
import { ResultCache } from '../../../src/engine/result-cache.js';
import { planKey } from '../../../src/nextql/keys.js';
import { buildTenant, item, request, type RequestBody } from '../../support/tenant-fixture.js';

function shop(rules: { slug: string; type: 'filter'; expression: string }[] = []) {
  const tenant = buildTenant({
    items: [
      item('a', { category: 'shoes', attributes: { price: 10 } }),
      item('b', { category: 'bags', attributes: { price: 20 } }),
    ],
    rules,
  });
  tenant.users.set('u1', { externalId: 'u1', attributes: { budget: 15 }, createdAt: 0, updatedAt: 0 });
  return tenant;
}

describe('the context of context_item() and context_user()', () => {
  it('reads the seed item: itemId, or the first of itemIds; none for other logic types', () => {
    const tenant = shop();
    const read = (logicType: 'item-to-item' | 'items-to-items' | 'user-to-item', body: RequestBody) =>
      expressionContext(tenant, logicType, request(body)).item?.(planKey('category'));
    expect(read('item-to-item', { logicType: 'item-to-item', itemId: 'b' })).toBe('bags');
    expect(read('items-to-items', { logicType: 'items-to-items', itemIds: ['b', 'a'] })).toBe('bags');
    expect(read('items-to-items', { logicType: 'items-to-items', itemIds: ['a', 'b'] })).toBe('shoes');
    expect(read('items-to-items', { logicType: 'items-to-items', itemIds: ['zz', 'a'] })).toBeUndefined();
    expect(read('user-to-item', { logicType: 'user-to-item', userId: 'u1', itemId: 'a' })).toBeUndefined();
  });

  it("carries the user's document only when an expression that may apply calls context_user()", () => {
    const plain = shop();
    const asked = request({ logicType: 'user-to-item', userId: 'u1' });
    attachUserContext(plain, asked);
    expect(asked.userContext).toBeUndefined();
    expect(userContextKey(asked)).toBe('');

    const filtered = request({
      logicType: 'user-to-item',
      userId: 'u1',
      filter: `'price' < context_user('budget')`,
    });
    attachUserContext(plain, filtered);
    expect(filtered.userContext).toEqual({
      externalId: 'u1',
      attributes: { budget: 15 },
      createdAt: '1970-01-01T00:00:00.000Z',
    });
    const context = expressionContext(plain, 'user-to-item', filtered);
    expect(context.user?.(planKey('budget'))).toBe(15);
    expect(context.user?.(planKey('attributes.budget'))).toBe(15);

    const byRule = shop([{ slug: 'budget', type: 'filter', expression: `'price' < context_user('budget')` }]);
    const stranger = request({ logicType: 'user-to-item', userId: 'nobody' });
    attachUserContext(byRule, stranger);
    expect(stranger.userContext).toBeNull();
    expect(expressionContext(byRule, 'user-to-item', stranger).user).toBeUndefined();
  });

  it('keys cached answers by the user document they may read', () => {
    const tenant = shop([{ slug: 'budget', type: 'filter', expression: `'price' < context_user('budget')` }]);
    const cache = new ResultCache({ maxBytes: 1024 * 1024, ttlMs: 60_000 });
    const keyOf = () => {
      const asked = request({ logicType: 'user-to-item', userId: 'u1' });
      attachUserContext(tenant, asked);
      return cache.key(tenant, asked, '');
    };
    const before = keyOf();
    expect(keyOf()).toBe(before);
    tenant.users.set('u1', { externalId: 'u1', attributes: { budget: 25 }, createdAt: 0, updatedAt: 1 });
    expect(keyOf()).not.toBe(before);
    // Without a context function anywhere, the key is what it always was.
    const plain = shop();
    const asked = request({ logicType: 'user-to-item', userId: 'u1' });
    attachUserContext(plain, asked);
    expect(cache.key(plain, asked, '').split('\u0000')).toHaveLength(7);
  });
});
