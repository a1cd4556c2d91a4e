import { describe, expect, test } from 'vitest';
import {
  compileBooster,
  compileFilter,
  compileSegmentation,
  NextqlError,
  readKey,
  validateExpression,
  type EvaluationContext,
  type NextqlItem,
} from '../../../src/nextql/index.js';
import { allIds, ArrayColumns } from './helpers.js';

const items: NextqlItem[] = [
  { externalId: 'a', category: 'shoes', attributes: { price: 50, tags: ['x'], size: { eu: 40 } } },
  { externalId: 'b', category: 'shoes', attributes: { price: 150, tags: ['y'], size: { eu: 42 } } },
  { externalId: 'c', category: 'boots', attributes: { price: 80, tags: ['x'], size: { eu: 40 } } },
  { externalId: 'd', category: 'boots', attributes: { price: 20 } },
];
const columns = new ArrayColumns(items);

/** A context whose seed item is `seed` and whose user document is `user`. */
function contextOf(seed?: NextqlItem, user?: NextqlItem): EvaluationContext {
  return {
    item: seed && ((key) => readKey(seed, key)),
    user: user && ((key) => readKey(user, key)),
  };
}

/** The external ids a filter keeps, by column and by document evaluation (which must agree). */
function kept(text: string, context?: EvaluationContext): string[] {
  const filter = compileFilter(text);
  const byColumns = [...filter.filterIds(columns, allIds(columns.size), { context })].map(
    (id) => items[id].externalId,
  );
  const byDocuments = items
    .filter((item) => filter.matches(item, { context }))
    .map((item) => item.externalId);
  expect(byDocuments).toEqual(byColumns);
  return byColumns;
}

const seed: NextqlItem = { externalId: 'seed', category: 'shoes', attributes: { price: 60, tags: ['x'] } };
const user: NextqlItem = {
  externalId: 'u1',
  attributes: { budget: 100, favourite: 'boots', size: { eu: 40 } },
};

describe('context_item and context_user', () => {
  test("read the seed item's keys by the items' key rules", () => {
    const context = contextOf(seed, user);
    expect(kept(`'category' = context_item('category')`, context)).toEqual(['a', 'b']);
    expect(
      kept(`'category' = context_item('category') and 'price' > context_item('price')`, context),
    ).toEqual(['b']);
    expect(kept(`context_item('price') < 'price'`, context)).toEqual(['b', 'c']);
    expect(kept(`'itemId' != context_item('itemId')`, context)).toEqual(['a', 'b', 'c', 'd']);
    expect(kept(`'tags' = context_item('tags')`, context)).toEqual(['a', 'c']);
    expect(kept(`context_item('attributes.price') = 60`, context)).toEqual(['a', 'b', 'c', 'd']);
    expect(kept(`context_item('category') in {"boots"}`, context)).toEqual([]);
    expect(kept(`context_item('tags') contains "x"`, context)).toEqual(['a', 'b', 'c', 'd']);
  });

  test("read the user's document, nested keys included", () => {
    const context = contextOf(seed, user);
    expect(kept(`'price' <= context_user('budget')`, context)).toEqual(['a', 'c', 'd']);
    expect(kept(`'category' = context_user('favourite')`, context)).toEqual(['c', 'd']);
    expect(kept(`'size.eu' = context_user('size.eu')`, context)).toEqual(['a', 'c']);
    expect(kept(`context_user('budget') > context_item('price')`, context)).toEqual(['a', 'b', 'c', 'd']);
    expect(kept(`context_user('budget') < context_item('price')`, context)).toEqual([]);
  });

  test('missing context fails closed: no seed item, no user, a missing key', () => {
    for (const context of [undefined, contextOf(undefined, undefined), contextOf(seed, undefined)]) {
      expect(kept(`'price' <= context_user('budget')`, context)).toEqual([]);
      expect(kept(`'price' != context_user('budget')`, context)).toEqual([]);
    }
    expect(kept(`'category' = context_item('category')`, contextOf(undefined, user))).toEqual([]);
    expect(kept(`'category' != context_item('nothing')`, contextOf(seed, user))).toEqual([]);
    expect(kept(`context_item('nothing') not_in {"a"}`, contextOf(seed, user))).toEqual([]);
    // `not` inverts the predicate's result as computed.
    expect(kept(`not ('category' = context_item('category'))`, contextOf(undefined, user))).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
  });

  test('one compiled filter serves each context with its own values', () => {
    const text = `'category' = context_item('category')`;
    const shoes = contextOf(seed);
    const boots = contextOf({ externalId: 'other', category: 'boots' });
    expect(kept(text, shoes)).toEqual(['a', 'b']);
    expect(kept(text, boots)).toEqual(['c', 'd']);
    expect(kept(text, shoes)).toEqual(['a', 'b']);
    expect(compileFilter(text).readsContext).toEqual({ item: true, user: false });
    expect(compileFilter(`'price' < context_user('budget')`).readsContext).toEqual({
      item: false,
      user: true,
    });
    expect(compileFilter(`'price' < 10`).readsContext).toEqual({ item: false, user: false });
  });

  test('boosters apply where their condition on the context holds', () => {
    const booster = compileBooster(`boost by 2 where 'category' = context_item('category')`);
    expect(booster.readsContext.item).toBe(true);
    const context = contextOf(seed);
    expect(items.map((item) => booster.factorFor(item, { context }))).toEqual([2, 2, 1, 1]);
    const scores = new Float64Array([1, 1, 1, 1]);
    booster.applyToScores(columns, allIds(4), scores, { context });
    expect([...scores]).toEqual([2, 2, 1, 1]);
    expect(items.map((item) => booster.factorFor(item))).toEqual([1, 1, 1, 1]);
  });

  test('type errors: one key argument; refused in segmentations', () => {
    const error = (text: string, kind: 'filter' | 'segmentation') => {
      const result = validateExpression(text, kind);
      if (result.valid) throw new Error(`${text} was accepted`);
      return result.error;
    };
    expect(error(`'a' = context_item()`, 'filter').message).toMatch(
      /context_item\(\) takes one attribute key/,
    );
    expect(error(`'a' = context_item("b")`, 'filter').position).toBe(19);
    expect(error(`'a' = context_user('b', 'c')`, 'filter').message).toMatch(/takes one argument/);
    const refused = error(`if context_user('vip') = true then {"vip"} else {"all"}`, 'segmentation');
    expect(refused.message).toMatch(
      /context_user\(\) is allowed in filters and boosters, not in segmentations/,
    );
    expect(refused.position).toBe(3);
    expect(() => compileSegmentation(`if 'a' = context_item('a') then {"x"} else {"y"}`)).toThrow(
      NextqlError,
    );
    expect(validateExpression(`'a' = context_item('a')`, 'filter')).toEqual({ valid: true });
    expect(validateExpression(`boost by 2 where 'a' = context_user('a')`, 'booster')).toEqual({
      valid: true,
    });
  });
});
