import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createTenant,
  expectError,
  removeDataDir,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';

let daemon: DaemonProcess;
let headers: Record<string, string>;

const post = (route: string, body: unknown) => call(daemon.url, 'POST', route, { headers, body });
const get = (route: string) => call(daemon.url, 'GET', route, { headers });
const ids = (response: { body: { items: { itemId: string }[] } }): string[] =>
  response.body.items.map((item) => item.itemId);
const scores = (response: { body: { items: { itemId: string; score: number }[] } }) =>
  new Map(response.body.items.map((item) => [item.itemId, item.score]));

/** Twelve items p1..p12, most popular first (p1 viewed 12 times, p12 once); shoes are odd, bags even. */
const ITEM_COUNT = 12;
const itemNames = Array.from({ length: ITEM_COUNT }, (_, i) => `p${i + 1}`);

beforeAll(async () => {
  daemon = await startDaemonProcess();
  headers = tenantHeaders(await createTenant(daemon.url, 'shop'));
  const items = itemNames.map((externalId, i) => ({
    externalId,
    category: i % 2 === 0 ? 'shoes' : 'bags',
    attributes: { price: (i + 1) * 10, brand: i % 3 === 0 ? 'acme' : 'zenith' },
  }));
  expect((await post('/ingestion/items', { items })).status).toBe(200);
  const interactions: Record<string, unknown>[] = [];
  itemNames.forEach((itemId, i) => {
    for (let v = 0; v < ITEM_COUNT - i; v++) {
      interactions.push({ userId: `viewer-${v}`, itemId, type: 'view', timestamp: new Date().toISOString() });
    }
  });
  expect((await post('/ingestion/interactions', { interactions })).status).toBe(200);
  const users = [
    { externalId: 'thrifty', attributes: { budget: 40, size: { eu: 40 } } },
    { externalId: 'spender', attributes: { budget: 100 } },
  ];
  expect((await post('/ingestion/users', { users })).status).toBe(200);
  // Popularity counts show within a second of the write.
  await eventually(async () => {
    const response = await post('/recommendations', {
      logicType: 'user-to-item',
      userId: 'nobody',
      count: 3,
    });
    expect(ids(response)).toEqual(['p1', 'p2', 'p3']);
  });
});

afterAll(async () => {
  await daemon.stop();
  removeDataDir(daemon.dataDir);
});

const forUser = (userId: string, extra: Record<string, unknown> = {}) =>
  post('/recommendations', { logicType: 'user-to-item', userId, count: 4, ...extra });

describe('rotation', () => {
  it('with rate 1 never returns an item again within the window while others remain', async () => {
    const seen: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const response = await forUser('r1', { rotationRate: 1 });
      expect(response.status).toBe(200);
      expect(response.body.count).toBe(4);
      seen.push(ids(response));
    }
    expect(seen).toEqual([
      ['p1', 'p2', 'p3', 'p4'],
      ['p5', 'p6', 'p7', 'p8'],
      ['p9', 'p10', 'p11', 'p12'],
    ]);
    // Exhausted: every item was shown once; the list is full again, best first.
    const exhausted = await forUser('r1', { rotationRate: 1 });
    expect(ids(exhausted)).toEqual(['p1', 'p2', 'p3', 'p4']);
    // Another identity is not rotated by r1's answers; a request without rotation neither.
    expect(ids(await forUser('r2', { rotationRate: 1 }))).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(ids(await forUser('r1', { noCache: true }))).toEqual(['p1', 'p2', 'p3', 'p4']);
  });

  it('with rate 0.5 multiplies the score by 0.5 per return', async () => {
    const base = scores(await forUser('unrotated', { count: 12, noCache: true }));
    const returned = new Map<string, number>();
    const answers: string[][] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await forUser('half', { rotationRate: 0.5, count: 3 });
      answers.push(ids(answer));
      for (const [itemId, score] of scores(answer)) {
        expect(score).toBeCloseTo(base.get(itemId)! * 0.5 ** (returned.get(itemId) ?? 0), 12);
        returned.set(itemId, (returned.get(itemId) ?? 0) + 1);
      }
      const ranked = [...scores(answer).values()];
      expect([...ranked].sort((a, b) => b - a)).toEqual(ranked);
    }
    // Demoted, not hidden: p1, the most popular, comes back within the window once others fell below it.
    expect(answers[0]).toEqual(['p1', 'p2', 'p3']);
    expect(answers.slice(1).flat()).toContain('p1');
    expect(new Set(answers.flat()).size).toBeGreaterThan(3);
  });

  it('forgets returns older than rotationTime', async () => {
    const window = { rotationRate: 1, rotationTime: 1 };
    expect(ids(await forUser('brief', window))).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(ids(await forUser('brief', window))).toEqual(['p5', 'p6', 'p7', 'p8']);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(ids(await forUser('brief', window))).toEqual(['p1', 'p2', 'p3', 'p4']);
    // A longer window of the same identity still sees the returns of the short one.
    expect(ids(await forUser('brief', { rotationRate: 1, rotationTime: 60 }))).toEqual([
      'p5',
      'p6',
      'p7',
      'p8',
    ]);
  });

  it("takes the scenario's rotationRate and rotationTime as defaults, the request's first", async () => {
    const scenario = { slug: 'rotating', logicType: 'user-to-item', rotationRate: 1, rotationTime: 3600 };
    expect((await post('/scenarios', scenario)).status).toBe(201);
    const stored = await get('/scenarios/rotating');
    expect(stored.body).toMatchObject({ rotationRate: 1, rotationTime: 3600 });
    const body = { scenario: 'rotating', userId: 'sc1', count: 4 };
    expect(ids(await post('/recommendations', body))).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(ids(await post('/recommendations', body))).toEqual(['p5', 'p6', 'p7', 'p8']);
    // The request turns it off.
    expect(ids(await post('/recommendations', { ...body, rotationRate: 0 }))).toEqual([
      'p1',
      'p2',
      'p3',
      'p4',
    ]);
    // The scenario's rate with the request's window: the returns above are within 10 minutes.
    expect(ids(await post('/recommendations', { ...body, rotationTime: 600 }))).toEqual([
      'p9',
      'p10',
      'p11',
      'p12',
    ]);
  });

  it('is never undone by a cached answer, on POST and on the legacy GET route', async () => {
    // An answer cached without rotation is not served to a request with it.
    expect(ids(await forUser('cached'))).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(ids(await forUser('cached'))).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(ids(await forUser('cached', { rotationRate: 1 }))).toEqual(['p1', 'p2', 'p3', 'p4']);
    // The same body again (no noCache) is ranked again.
    expect(ids(await forUser('cached', { rotationRate: 1 }))).toEqual(['p5', 'p6', 'p7', 'p8']);
    const legacy = '/recommendations/user-to-item/legacy?count=4&rotationRate=1&rotationTime=600';
    const first = await get(legacy);
    expect(first.status).toBe(200);
    expect(ids(first)).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(ids(await get(legacy))).toEqual(['p5', 'p6', 'p7', 'p8']);
  });

  it('refuses rates outside 0..1 and windows that are not positive', async () => {
    for (const bad of [
      { rotationRate: 1.5 },
      { rotationRate: -0.1 },
      { rotationRate: '0.5' },
      { rotationTime: 0 },
      { rotationTime: -5 },
      { rotationTime: 'long' },
    ]) {
      expectError(await forUser('bad', bad), 400, 'INVALID_BODY');
    }
    for (const bad of [
      'rotationRate=2',
      'rotationRate=abc',
      'rotationRate=',
      'rotationTime=0',
      'rotationTime=x',
    ]) {
      expectError(await get(`/recommendations/user-to-item/bad?${bad}`), 400, 'INVALID_QUERY');
    }
    for (const bad of [{ rotationRate: 2 }, { rotationTime: 0 }]) {
      const scenario = { slug: 'bad-rotation', logicType: 'user-to-item', ...bad };
      expectError(await post('/scenarios', scenario), 400, 'INVALID_BODY');
    }
  });
});

const similar = (itemId: string, extra: Record<string, unknown> = {}) =>
  post('/recommendations', { logicType: 'item-to-item', itemId, count: 12, ...extra });

describe('context_item and context_user', () => {
  it("filter and boost by the seed item's keys in the request", async () => {
    const shoes = await similar('p1', { filter: `'category' = context_item('category')` });
    expect(shoes.status).toBe(200);
    expect(ids(shoes).sort()).toEqual(['p11', 'p3', 'p5', 'p7', 'p9']);
    const bags = await similar('p2', { filter: `'category' = context_item('category')` });
    expect(ids(bags).sort()).toEqual(['p10', 'p12', 'p4', 'p6', 'p8']);
    const dearer = await similar('p5', {
      filter: `'category' = context_item('category') and 'price' > context_item('price')`,
    });
    expect(ids(dearer).sort()).toEqual(['p11', 'p7', 'p9']);
    const boosted = await similar('p1', {
      boosters: [`boost by 1000 where 'brand' = context_item('brand')`],
    });
    // acme: p1, p4, p7, p10; p1 is the seed.
    expect(ids(boosted).slice(0, 3).sort()).toEqual(['p10', 'p4', 'p7']);
    // similar-products reads its itemId too.
    const like = await post('/recommendations', {
      logicType: 'similar-products',
      itemId: 'p2',
      count: 12,
      filter: `'category' = context_item('category')`,
    });
    expect(like.status).toBe(200);
    expect(ids(like).sort()).toEqual(['p10', 'p12', 'p4', 'p6', 'p8']);
  });

  it('reads the seed item in scenario and rule filters, and in the legacy GET route', async () => {
    const rule = {
      slug: 'same-category',
      type: 'filter',
      expression: `'category' = context_item('category')`,
    };
    expect((await post('/rules', rule)).status).toBe(201);
    const scenario = {
      slug: 'alike',
      logicType: 'item-to-item',
      rulesSlugs: ['same-category'],
      filter: `'price' < context_item('price')`,
    };
    expect((await post('/scenarios', scenario)).status).toBe(201);
    const response = await post('/recommendations', { scenario: 'alike', itemId: 'p7', count: 12 });
    expect(ids(response).sort()).toEqual(['p1', 'p3', 'p5']);
    const legacy = await get('/recommendations/item-to-item/p8?scenario=alike&count=12');
    expect(ids(legacy).sort()).toEqual(['p2', 'p4', 'p6']);
    const boosting = {
      slug: 'brand-boost',
      logicType: 'item-to-item',
      boosters: [`boost by 1000 where 'brand' = context_item('brand')`],
    };
    expect((await post('/scenarios', boosting)).status).toBe(201);
    const boosted = await post('/recommendations', { scenario: 'brand-boost', itemId: 'p4', count: 3 });
    expect(ids(boosted).sort()).toEqual(['p1', 'p10', 'p7']);
    // A booster rule, linked by the request.
    const cheaper = {
      slug: 'cheaper',
      type: 'booster',
      expression: `boost by 1000 where 'price' < context_item('price')`,
    };
    expect((await post('/rules', cheaper)).status).toBe(201);
    const byRule = await post('/recommendations', {
      logicType: 'item-to-item',
      itemId: 'p4',
      count: 3,
      rulesSlugs: ['cheaper'],
    });
    expect(ids(byRule).sort()).toEqual(['p1', 'p2', 'p3']);
  });

  it('reads the first of itemIds for items-to-items', async () => {
    const filter = `'category' = context_item('category')`;
    const shoesFirst = await post('/recommendations', {
      logicType: 'items-to-items',
      itemIds: ['p1', 'p2'],
      count: 12,
      filter,
    });
    expect(ids(shoesFirst).sort()).toEqual(['p11', 'p3', 'p5', 'p7', 'p9']);
    const bagsFirst = await post('/recommendations/items-to-items', {
      itemIds: ['p2', 'p1'],
      count: 12,
      filter,
    });
    expect(ids(bagsFirst).sort()).toEqual(['p10', 'p12', 'p4', 'p6', 'p8']);
    // An unknown first id is no seed item: the filter keeps nothing.
    const unknownFirst = await post('/recommendations', {
      logicType: 'items-to-items',
      itemIds: ['nope', 'p1'],
      count: 12,
      filter,
    });
    expect(unknownFirst.status).toBe(200);
    expect(ids(unknownFirst)).toEqual([]);
  });

  it("reads the user's stored document, and fails closed without one", async () => {
    const filter = `'price' <= context_user('budget')`;
    const thrifty = await forUser('thrifty', { filter, count: 12 });
    expect(ids(thrifty)).toEqual(['p1', 'p2', 'p3', 'p4']);
    const spender = await forUser('spender', { filter, count: 12 });
    expect(ids(spender)).toHaveLength(10);
    // No user row, a missing key, no seed item: the predicates are false.
    expect(ids(await forUser('stranger', { filter, count: 12 }))).toEqual([]);
    expect(ids(await forUser('thrifty', { filter: `'price' != context_user('missing')` }))).toEqual([]);
    expect(ids(await forUser('thrifty', { filter: `'category' = context_item('category')` }))).toEqual([]);
    const negated = await forUser('stranger', {
      filter: `not ('price' <= context_user('budget'))`,
      count: 12,
    });
    expect(ids(negated)).toHaveLength(12);
    // Nested keys, by the items' key rules; and in a scenario's booster.
    const sized = {
      slug: 'sized',
      logicType: 'user-to-item',
      boosters: [`boost by 100 where 'price' > context_user('size.eu')`],
    };
    expect((await post('/scenarios', sized)).status).toBe(201);
    const boosted = await post('/recommendations', { scenario: 'sized', userId: 'thrifty', count: 3 });
    expect(ids(boosted)).toEqual(['p5', 'p6', 'p7']);
  });

  it('never serves one context’s cached answer to another', async () => {
    const filter = `'price' <= context_user('budget')`;
    const before = await forUser('changing', { filter, count: 12 });
    expect(ids(before)).toEqual([]);
    const users = [{ externalId: 'changing', attributes: { budget: 20 } }];
    expect((await post('/ingestion/users', { users })).status).toBe(200);
    expect(ids(await forUser('changing', { filter, count: 12 }))).toEqual(['p1', 'p2']);
    users[0].attributes.budget = 30;
    expect((await post('/ingestion/users', { users })).status).toBe(200);
    expect(ids(await forUser('changing', { filter, count: 12 }))).toEqual(['p1', 'p2', 'p3']);
    // The seed item: a changed category shows at once.
    const itemFilter = { filter: `'category' = context_item('category')`, count: 12 };
    expect(ids(await similar('p12', itemFilter))).toHaveLength(5);
    const moved = { externalId: 'p12', category: 'hats', attributes: { price: 120, brand: 'zenith' } };
    expect((await post('/ingestion/items', { items: [moved] })).status).toBe(200);
    expect(ids(await similar('p12', itemFilter))).toEqual([]);
  });

  it('refuses the context functions in segmentations', async () => {
    const segmentation = {
      segmentationId: 'by-user',
      type: 'auto-nextql',
      expression: `if 'price' > context_user('budget') then {"dear"} else {"cheap"}`,
    };
    const refused = await post('/segmentations', segmentation);
    expectError(refused, 400, 'INVALID_EXPRESSION');
    expect(refused.body.details[0]).toMatchObject({ position: 13, line: 1, column: 14 });
    const validated = await post('/segmentations/validate-expression', {
      expression: `if context_item('a') = 1 then {"x"} else {"y"}`,
      kind: 'segmentation',
    });
    expect(validated.status).toBe(200);
    expect(validated.body).toMatchObject({ valid: false, error: { position: 3 } });
    expectError(await forUser('thrifty', { filter: `'price' <= context_user()` }), 400, 'INVALID_EXPRESSION');
  });
});
