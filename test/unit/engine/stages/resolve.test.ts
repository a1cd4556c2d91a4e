import { describe, expect, it } from 'vitest';
import type { LogicType } from '../../../../src/contract/scenarios.js';
import {
  apiErrorOf,
  buildTenant,
  contextOf,
  idOf,
  item,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

const tenant = buildTenant({
  items: ['a', 'b', item('c', { category: 'x' })],
  events: [{ item: 'ghost', user: 'u1' }],
  rules: [
    { slug: 'in-stock', type: 'filter', expression: `'stock' > 0`, priority: 1 },
    { slug: 'cheap', type: 'filter', expression: `'price' < 50`, priority: 5 },
    { slug: 'acme', type: 'filter', expression: `'brand' = "acme"`, priority: 5 },
    { slug: 'red', type: 'booster', expression: `boost by 2 where 'color' = "red"`, priority: 0 },
    { slug: 'blue', type: 'booster', expression: `boost by 3 where 'color' = "blue"`, priority: 9 },
    { slug: 'per-category', type: 'constraint', constraints: { maxPerCategory: 4, freshnessBoostDays: 3 } },
    {
      slug: 'tail',
      type: 'constraint',
      constraints: { maxPerCategory: 9, injectLongTail: true },
      priority: 2,
    },
  ],
  segmentations: [
    { segmentationId: 'by-category', type: 'property', property: 'category' },
    { segmentationId: 'by-brand', type: 'property', property: 'attributes.brand' },
  ],
  scenarios: [
    {
      slug: 'similar',
      logicType: 'item-to-item',
      filter: `'color' != "green"`,
      boosters: [`boost by 5 where 'brand' = "acme"`],
      rulesSlugs: ['in-stock', 'red'],
      segmentationId: 'by-category',
      itemsPerSegment: 3,
      autoRelaxFilters: true,
      relaxEntireFilterOnEmpty: true,
      maxItems: 5,
      minItems: 2,
    },
    { slug: 'plain', logicType: 'user-to-item' },
    { slug: 'constrained', logicType: 'item-to-item', rulesSlugs: ['per-category', 'tail', 'in-stock'] },
    {
      slug: 'own-constraints',
      logicType: 'item-to-item',
      rulesSlugs: ['per-category'],
      constraints: { maxPerCategory: 1 },
    },
    { slug: 'named', logicType: 'item-to-item', algorithm: 'category-popularity' },
    { slug: 'mismatched', logicType: 'item-to-item', algorithm: 'weighted-history' },
    { slug: 'unknown-algorithm', logicType: 'items-to-items', algorithm: 'no-such-thing' },
  ],
});

const similar: RequestBody = { scenario: 'similar', itemId: 'a' };

describe('resolve: errors', () => {
  it('an unknown scenario slug is 404 SCENARIO_NOT_FOUND', () => {
    const error = apiErrorOf(() => contextOf(tenant, { scenario: 'nope', userId: 'u1' }));
    expect([error.code, error.statusCode]).toEqual(['SCENARIO_NOT_FOUND', 404]);
  });

  it.each<[string, RequestBody, string]>([
    ['user-to-item without userId', { logicType: 'user-to-item' }, 'userId'],
    ['recently-viewed without userId', { logicType: 'recently-viewed', itemId: 'a' }, 'userId'],
    ['item-to-item without itemId', { logicType: 'item-to-item', userId: 'u1' }, 'itemId'],
    ['similar-products without itemId', { logicType: 'similar-products', userId: 'u1' }, 'itemId'],
    ['items-to-items without itemIds', { logicType: 'items-to-items', itemId: 'a' }, 'itemIds'],
    ['items-to-items with empty itemIds', { logicType: 'items-to-items', itemIds: [] }, 'itemIds'],
    ['a scenario of item-to-item without itemId', { scenario: 'similar', userId: 'u1' }, 'itemId'],
  ])('%s is 400 MISSING_SEED naming the field', (_name, body, field) => {
    const error = apiErrorOf(() => contextOf(tenant, body));
    expect([error.code, error.statusCode]).toEqual(['MISSING_SEED', 400]);
    expect(error.message).toContain(field);
  });

  it('no logicType and no scenario is 400 MISSING_SEED', () => {
    expect(apiErrorOf(() => contextOf(tenant, { userId: 'u1', itemId: 'a' })).code).toBe('MISSING_SEED');
  });

  it.each<LogicType>(['item-to-item', 'similar-products'])(
    '%s with an unknown seed item is 404 ITEM_NOT_FOUND',
    (logicType) => {
      const error = apiErrorOf(() => contextOf(tenant, { logicType, itemId: 'missing' }));
      expect([error.code, error.statusCode]).toEqual(['ITEM_NOT_FOUND', 404]);
    },
  );

  it('an item known only from events is not a catalog seed (ITEM_NOT_FOUND)', () => {
    expect(apiErrorOf(() => contextOf(tenant, { logicType: 'item-to-item', itemId: 'ghost' })).code).toBe(
      'ITEM_NOT_FOUND',
    );
  });

  it('items-to-items ignores unknown seeds and keeps the known ones once each', () => {
    const context = contextOf(tenant, {
      logicType: 'items-to-items',
      itemIds: ['x1', 'b', 'ghost', 'a', 'b'],
    });
    expect(context.seeds).toEqual([idOf(tenant, 'b'), idOf(tenant, 'a')]);
  });

  it('items-to-items is 404 ITEM_NOT_FOUND only when no seed is known', () => {
    const error = apiErrorOf(() =>
      contextOf(tenant, { logicType: 'items-to-items', itemIds: ['x1', 'ghost'] }),
    );
    expect(error.code).toBe('ITEM_NOT_FOUND');
  });
});

describe('resolve: algorithm', () => {
  it.each<[LogicType, RequestBody, string]>([
    ['user-to-item', { userId: 'u1' }, 'weighted-history'],
    ['item-to-item', { itemId: 'a' }, 'co-occurrence'],
    ['items-to-items', { itemIds: ['a'] }, 'multi-seed-co-occurrence'],
    ['recently-viewed', { userId: 'u1' }, 'recently-viewed'],
    ['similar-products', { itemId: 'a' }, 'vector-similarity'],
  ])('without a scenario, %s uses its default algorithm', (logicType, seed, algorithm) => {
    expect(contextOf(tenant, { logicType, ...seed }).config.algorithm.name).toBe(algorithm);
  });

  it("the scenario's algorithm when it serves the logic type", () => {
    expect(contextOf(tenant, { scenario: 'named', itemId: 'a' }).config.algorithm.name).toBe(
      'category-popularity',
    );
  });

  it("the logic type's default when the scenario's algorithm does not serve it or does not exist", () => {
    expect(contextOf(tenant, { scenario: 'mismatched', itemId: 'a' }).config.algorithm.name).toBe(
      'co-occurrence',
    );
    expect(contextOf(tenant, { scenario: 'unknown-algorithm', itemIds: ['a'] }).config.algorithm.name).toBe(
      'multi-seed-co-occurrence',
    );
  });

  it("the scenario's logic type wins over the request's", () => {
    const context = contextOf(tenant, { scenario: 'similar', logicType: 'user-to-item', itemId: 'a' });
    expect(context.config.logicType).toBe('item-to-item');
    expect(context.seeds).toEqual([idOf(tenant, 'a')]);
  });
});

describe('resolve: count and bounds', () => {
  it('count defaults to 10', () => {
    expect(contextOf(tenant, { logicType: 'user-to-item', userId: 'u1' }).config.count).toBe(10);
  });

  it('count is capped by the scenario maxItems, and the default count too', () => {
    expect(contextOf(tenant, { ...similar, count: 3 }).config.count).toBe(3);
    expect(contextOf(tenant, { ...similar, count: 50 }).config.count).toBe(5);
    expect(contextOf(tenant, similar).config.count).toBe(5);
  });

  it('the pool is max(3 × count, 100)', () => {
    expect(contextOf(tenant, { logicType: 'user-to-item', userId: 'u1', count: 10 }).poolSize).toBe(100);
    expect(contextOf(tenant, { logicType: 'user-to-item', userId: 'u1', count: 40 }).poolSize).toBe(120);
  });

  it('minItems comes from the scenario, 0 without one', () => {
    expect(contextOf(tenant, similar).config.minItems).toBe(2);
    expect(contextOf(tenant, { logicType: 'item-to-item', itemId: 'a' }).config.minItems).toBe(0);
  });
});

describe('resolve: the scenario as stored', () => {
  const config = contextOf(tenant, similar).config;

  it('filter rules (by priority) come before the scenario filter, split into clauses', () => {
    expect(config.filterClauses).toEqual([`'stock' > 0`, `'color' != "green"`]);
  });

  it('booster rules then the scenario boosters', () => {
    expect(config.boosters.map((booster) => booster.text)).toEqual([
      `boost by 2 where 'color' = "red"`,
      `boost by 5 where 'brand' = "acme"`,
    ]);
  });

  it('segmentation, itemsPerSegment and the relax flags', () => {
    expect(config.segmentation?.segmentationId).toBe('by-category');
    expect(config.itemsPerSegment).toBe(3);
    expect([config.autoRelaxFilters, config.relaxEntireFilterOnEmpty]).toEqual([true, true]);
    expect([config.autoRelaxConstraints, config.autoExpandSegments]).toEqual([false, true]);
  });

  it('without a scenario nothing is configured', () => {
    const bare = contextOf(tenant, { logicType: 'item-to-item', itemId: 'a' }).config;
    expect(bare.filterClauses).toEqual([]);
    expect(bare.boosters).toEqual([]);
    expect(bare.constraints).toEqual({});
    expect(bare.segmentation).toBeUndefined();
    expect([bare.autoRelaxFilters, bare.relaxEntireFilterOnEmpty]).toEqual([false, false]);
  });
});

describe('resolve: rules', () => {
  it('linked rules are ordered by priority, highest first (ties by slug)', () => {
    const config = contextOf(tenant, {
      logicType: 'item-to-item',
      itemId: 'a',
      rulesSlugs: ['in-stock', 'cheap', 'acme', 'red', 'blue'],
    }).config;
    expect(config.filterClauses).toEqual([`'brand' = "acme"`, `'price' < 50`, `'stock' > 0`]);
    expect(config.boosters.map((booster) => booster.factor)).toEqual([3, 2]);
  });

  it('constraint rules fill what the stored scenario leaves unset, highest priority first', () => {
    expect(contextOf(tenant, { scenario: 'constrained', itemId: 'a' }).config.constraints).toEqual({
      maxPerCategory: 9,
      injectLongTail: true,
      freshnessBoostDays: 3,
    });
  });

  it("the scenario's own constraints win over constraint rules", () => {
    expect(contextOf(tenant, { scenario: 'own-constraints', itemId: 'a' }).config.constraints).toEqual({
      maxPerCategory: 1,
      freshnessBoostDays: 3,
    });
  });

  it('constraint rules come only from the stored scenario, never from request rulesSlugs', () => {
    expect(
      contextOf(tenant, { scenario: 'plain', userId: 'u1', rulesSlugs: ['per-category'] }).config.constraints,
    ).toEqual({});
    const replaced = contextOf(tenant, { scenario: 'constrained', itemId: 'a', rulesSlugs: null }).config;
    expect(replaced.constraints).toEqual({ maxPerCategory: 9, injectLongTail: true, freshnessBoostDays: 3 });
    expect(replaced.filterClauses).toEqual([]);
  });
});

describe('resolve: request overrides', () => {
  const configOf = (overrides: Partial<RequestBody>) =>
    contextOf(tenant, { ...similar, ...overrides }).config;

  it('an omitted field keeps the scenario value', () => {
    expect(configOf({}).filterClauses).toEqual([`'stock' > 0`, `'color' != "green"`]);
  });

  it('filter: a value replaces the scenario filter (rule filters stay); null or "" clears it', () => {
    expect(configOf({ filter: `'price' < 9 and 'size' = "L"` }).filterClauses).toEqual([
      `'stock' > 0`,
      `'price' < 9`,
      `'size' = "L"`,
    ]);
    expect(configOf({ filter: null }).filterClauses).toEqual([`'stock' > 0`]);
    expect(configOf({ filter: '' }).filterClauses).toEqual([`'stock' > 0`]);
  });

  it('boosters: a value replaces the scenario list (booster rules stay); null or [] clears it', () => {
    const texts = (overrides: Partial<RequestBody>) => configOf(overrides).boosters.map((b) => b.text);
    expect(texts({ boosters: [`boost by 7 where 'size' = "L"`] })).toEqual([
      `boost by 2 where 'color' = "red"`,
      `boost by 7 where 'size' = "L"`,
    ]);
    expect(texts({ boosters: null })).toEqual([`boost by 2 where 'color' = "red"`]);
    expect(texts({ boosters: [] })).toEqual([`boost by 2 where 'color' = "red"`]);
  });

  it('rulesSlugs: a value replaces the linked rules, unknown slugs ignored; null or [] clears them', () => {
    const replaced = configOf({ rulesSlugs: ['cheap', 'no-such-rule', 'blue'] });
    expect(replaced.filterClauses).toEqual([`'price' < 50`, `'color' != "green"`]);
    expect(replaced.boosters.map((b) => b.factor)).toEqual([3, 5]);
    expect(configOf({ rulesSlugs: null }).filterClauses).toEqual([`'color' != "green"`]);
    expect(configOf({ rulesSlugs: [] }).boosters.map((b) => b.factor)).toEqual([5]);
  });

  it('rulesSlugs overrides work without a scenario', () => {
    const config = contextOf(tenant, {
      logicType: 'item-to-item',
      itemId: 'a',
      rulesSlugs: ['cheap'],
    }).config;
    expect(config.filterClauses).toEqual([`'price' < 50`]);
  });

  it('segmentationId: a value replaces the segmentation; null or "" clears it', () => {
    expect(configOf({ segmentationId: 'by-brand' }).segmentation?.segmentationId).toBe('by-brand');
    expect(configOf({ segmentationId: null }).segmentation).toBeUndefined();
    expect(configOf({ segmentationId: '' }).segmentation).toBeUndefined();
  });

  it('itemsPerSegment: a value replaces it; null means 1', () => {
    expect(configOf({ itemsPerSegment: 7 }).itemsPerSegment).toBe(7);
    expect(configOf({ itemsPerSegment: null }).itemsPerSegment).toBe(1);
  });

  it('autoRelaxFilters and relaxEntireFilterOnEmpty: false disables, true enables', () => {
    expect(configOf({ autoRelaxFilters: false }).autoRelaxFilters).toBe(false);
    expect(configOf({ relaxEntireFilterOnEmpty: false }).relaxEntireFilterOnEmpty).toBe(false);
    const plain = (overrides: Partial<RequestBody>) =>
      contextOf(tenant, { scenario: 'plain', userId: 'u1', ...overrides }).config;
    expect(plain({ autoRelaxFilters: true }).autoRelaxFilters).toBe(true);
    expect(plain({ relaxEntireFilterOnEmpty: true }).relaxEntireFilterOnEmpty).toBe(true);
  });

  it('overrides work without a scenario', () => {
    const config = contextOf(tenant, {
      logicType: 'item-to-item',
      itemId: 'a',
      filter: `'price' < 9`,
      boosters: [`boost by 2 where 'size' = "L"`],
      segmentationId: 'by-brand',
      itemsPerSegment: 2,
      autoRelaxFilters: true,
    }).config;
    expect(config.filterClauses).toEqual([`'price' < 9`]);
    expect(config.boosters.map((b) => b.factor)).toEqual([2]);
    expect(config.segmentation?.segmentationId).toBe('by-brand');
    expect(config.itemsPerSegment).toBe(2);
    expect(config.autoRelaxFilters).toBe(true);
  });
});

describe('resolve: identity and geo', () => {
  it('the userId (or a session id sent as userId) is the identity whose history is used', () => {
    const context = contextOf(tenant, { logicType: 'user-to-item', userId: 'u1' });
    expect(context.identity).toBe('u1');
    expect(context.history).toBe(tenant.histories.get('u1'));
    expect(contextOf(tenant, { logicType: 'item-to-item', itemId: 'a' }).identity).toBeUndefined();
  });
});

describe('resolve: configuration changes', () => {
  it('a request without overrides sees a scenario or rule change as soon as the configuration version moves', () => {
    const own = buildTenant({
      items: ['a'],
      rules: [{ slug: 'cheap', type: 'filter', expression: `'price' < 50` }],
      scenarios: [{ slug: 'pdp', logicType: 'item-to-item', filter: `'stock' > 0`, rulesSlugs: ['cheap'] }],
    });
    const body: RequestBody = { scenario: 'pdp', itemId: 'a' };
    expect(contextOf(own, body).config.filterClauses).toEqual([`'price' < 50`, `'stock' > 0`]);
    own.config.scenarios.set('pdp', { ...own.config.scenarios.get('pdp')!, filter: `'stock' > 5` });
    own.config.version++;
    expect(contextOf(own, body).config.filterClauses).toEqual([`'price' < 50`, `'stock' > 5`]);
    own.config.rules.set('cheap', { ...own.config.rules.get('cheap')!, expression: `'price' < 9` });
    own.config.version++;
    expect(contextOf(own, body).config.filterClauses).toEqual([`'price' < 9`, `'stock' > 5`]);
  });

  it('overrides of one request never reach the next plain request, and count is per request', () => {
    const own = buildTenant({
      items: ['a'],
      scenarios: [{ slug: 'pdp', logicType: 'item-to-item', filter: `'stock' > 0` }],
    });
    const plain: RequestBody = { scenario: 'pdp', itemId: 'a' };
    expect(contextOf(own, { ...plain, filter: `'price' < 3`, count: 4 }).config).toMatchObject({
      filterClauses: [`'price' < 3`],
      count: 4,
    });
    expect(contextOf(own, plain).config).toMatchObject({ filterClauses: [`'stock' > 0`], count: 10 });
    expect(contextOf(own, { ...plain, count: 2 }).config.count).toBe(2);
  });
});
