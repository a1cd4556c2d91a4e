import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../../src/nextql/index.js';
import { filters } from '../../../../src/engine/stages/filters.js';
import {
  buildTenant,
  contextOf,
  entriesOf,
  item,
  poolOf,
  rank,
  rankIds,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

const shop = buildTenant({
  items: [
    'seed',
    item('a', { attributes: { price: 10, stock: 0 } }),
    item('b', { attributes: { price: 90, stock: 3 } }),
    item('c', { attributes: { price: 20, stock: 2 } }),
    item('d', { attributes: { price: 30, stock: 1 } }),
    item('e', { attributes: { price: 40, stock: 0 } }),
  ],
  events: [{ item: 'e', times: 3 }, { item: 'd', times: 2 }, { item: 'b' }],
  neighbours: [
    ['seed', 'a', 0.5],
    ['seed', 'b', 0.25],
  ],
  rules: [{ slug: 'in-stock', type: 'filter', expression: `'stock' > 0` }],
  scenarios: [
    { slug: 'cheap', logicType: 'item-to-item', filter: `'price' < 50` },
    { slug: 'cheap-in-stock', logicType: 'item-to-item', filter: `'price' < 50`, rulesSlugs: ['in-stock'] },
  ],
});

describe('stage 5, filters', () => {
  it('keeps the matching entries of a pool in order', () => {
    const pool = poolOf(shop, [
      ['e', 5],
      ['b', 4],
      ['c', 3],
      ['a', 2],
    ]);
    const context = contextOf(shop, { logicType: 'item-to-item', itemId: 'seed' });
    expect(entriesOf(shop, filters(pool, context, compileFilter(`'price' < 50`)))).toEqual([
      ['e', 5],
      ['c', 3],
      ['a', 2],
    ]);
  });

  it('without a filter every candidate stays (own candidates, then the fill by popularity)', () => {
    expect(rankIds(shop, { logicType: 'item-to-item', itemId: 'seed' })).toEqual(['a', 'b', 'e', 'd', 'c']);
  });

  it('the scenario filter removes non-matching own and fill candidates', () => {
    expect(rankIds(shop, { scenario: 'cheap', itemId: 'seed' })).toEqual(['a', 'e', 'd', 'c']);
  });

  it('filter rules apply together with the scenario filter', () => {
    expect(rankIds(shop, { scenario: 'cheap-in-stock', itemId: 'seed' })).toEqual(['d', 'c']);
  });

  it('a selective filter reaches deeper into the popularity fill, so the list is still full', () => {
    // 400 items without own candidates: the 12 cheap ones come last in popularity (ties by insertion).
    const items = Array.from({ length: 400 }, (_, n) =>
      item(`i${String(n).padStart(3, '0')}`, { attributes: { price: n >= 388 ? 5 : 100 } }),
    );
    const wide = buildTenant({ items: ['seed', ...items] });
    const body: RequestBody = { logicType: 'item-to-item', itemId: 'seed', filter: `'price' < 50` };
    expect(rankIds(wide, body)).toEqual(Array.from({ length: 10 }, (_, n) => `i${388 + n}`));
  });
});

/**
 * Clauses in order: the rules by priority (wide-or, a top-level `or` of priority 5; in-stock, 1), then
 * the scenario filter's clauses. Only x passes the first three clauses, only y the first two.
 */
const relaxing = buildTenant({
  items: [
    'seed',
    item('x', { attributes: { stock: 1, color: 'red', price: 10, size: 'M' } }),
    item('y', { attributes: { stock: 1, color: 'blue', price: 90, size: 'L' } }),
    item('z', { attributes: { stock: 0, color: 'green', price: 10, size: 'L' } }),
  ],
  rules: [
    { slug: 'in-stock', type: 'filter', expression: `'stock' > 0`, priority: 1 },
    { slug: 'colourful', type: 'filter', expression: `'color' = "red" or 'color' = "blue"`, priority: 5 },
  ],
  scenarios: [
    {
      slug: 'strict',
      logicType: 'item-to-item',
      rulesSlugs: ['in-stock', 'colourful'],
      filter: `'price' < 50 and 'size' = "L"`,
      autoRelaxFilters: true,
    },
    {
      slug: 'strict-whole',
      logicType: 'item-to-item',
      rulesSlugs: ['in-stock', 'colourful'],
      filter: `'price' < 50 and 'size' = "L"`,
      relaxEntireFilterOnEmpty: true,
    },
  ],
});

const colourful = `'color' = "red" or 'color' = "blue"`;
const original = `(${colourful}) and 'stock' > 0 and 'price' < 50 and 'size' = "L"`;

describe('stage 5, filter auto-relax', () => {
  it('drops clauses from the right until results appear; rule clauses sit left of the scenario filter', () => {
    const list = rank(relaxing, { scenario: 'strict', itemId: 'seed' });
    expect(rankIds(relaxing, { scenario: 'strict', itemId: 'seed' })).toEqual(['x']);
    expect(list.filterRelaxation).toEqual({
      droppedClauses: [`'size' = "L"`],
      effectiveFilter: `(${colourful}) and 'stock' > 0 and 'price' < 50`,
      droppedEntireFilter: false,
      originalFilter: original,
    });
  });

  it('lists the dropped clauses right to left', () => {
    const body: RequestBody = {
      scenario: 'strict',
      itemId: 'seed',
      filter: `'price' > 100 and 'size' = "M"`,
    };
    expect(rankIds(relaxing, body)).toEqual(['x', 'y']);
    expect(rank(relaxing, body).filterRelaxation).toEqual({
      droppedClauses: [`'size' = "M"`, `'price' > 100`],
      effectiveFilter: `(${colourful}) and 'stock' > 0`,
      droppedEntireFilter: false,
      originalFilter: `(${colourful}) and 'stock' > 0 and 'price' > 100 and 'size' = "M"`,
    });
  });

  it('never drops the last clause on its own: nothing found stays empty without relaxEntireFilterOnEmpty', () => {
    const list = rank(relaxing, {
      scenario: 'strict',
      itemId: 'seed',
      rulesSlugs: [],
      filter: `'price' < 0 and 'stock' > 0`,
    });
    expect(list.ids.length).toBe(0);
    expect(list.filterRelaxation).toBeUndefined();
  });

  it('relaxEntireFilterOnEmpty with autoRelaxFilters drops the whole filter when clauses are not enough', () => {
    const list = rank(relaxing, {
      scenario: 'strict',
      itemId: 'seed',
      rulesSlugs: [],
      filter: `'price' < 0 and 'stock' > 0`,
      relaxEntireFilterOnEmpty: true,
    });
    expect(externalIds(list.ids)).toEqual(['x', 'y', 'z']);
    expect(list.filterRelaxation).toEqual({
      droppedClauses: [`'stock' > 0`, `'price' < 0`],
      effectiveFilter: null,
      droppedEntireFilter: true,
      originalFilter: `'price' < 0 and 'stock' > 0`,
    });
  });

  it('relaxEntireFilterOnEmpty without autoRelaxFilters drops the whole filter at once', () => {
    const list = rank(relaxing, { scenario: 'strict-whole', itemId: 'seed' });
    expect(externalIds(list.ids)).toEqual(['x', 'y', 'z']);
    expect(list.filterRelaxation).toEqual({
      droppedClauses: [`'size' = "L"`, `'price' < 50`, `'stock' > 0`, colourful],
      effectiveFilter: null,
      droppedEntireFilter: true,
      originalFilter: original,
    });
  });

  it('a single top-level `or` scenario filter is one clause, wrapped in the joined filters', () => {
    const list = rank(relaxing, {
      logicType: 'item-to-item',
      itemId: 'seed',
      filter: `'price' < 0 or 'size' = "XL"`,
      relaxEntireFilterOnEmpty: true,
    });
    expect(list.filterRelaxation).toEqual({
      droppedClauses: [`'price' < 0 or 'size' = "XL"`],
      effectiveFilter: null,
      droppedEntireFilter: true,
      originalFilter: `('price' < 0 or 'size' = "XL")`,
    });
  });

  it('without either flag a filter matching nothing gives an empty list and no relaxation', () => {
    const list = rank(relaxing, { scenario: 'strict', itemId: 'seed', autoRelaxFilters: false });
    expect(list.ids.length).toBe(0);
    expect(list.filterRelaxation).toBeUndefined();
  });

  it('no relaxation object when the full filter matches something', () => {
    const list = rank(relaxing, { scenario: 'strict', itemId: 'seed', filter: `'price' < 50` });
    expect(externalIds(list.ids)).toEqual(['x']);
    expect(list.filterRelaxation).toBeUndefined();
  });
});

function externalIds(ids: ArrayLike<number>): string[] {
  return Array.from(ids, (id) => relaxing.catalog.externalIds[id]);
}
