import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { RankedList } from '../../../src/engine/pipeline.js';
import { projectItem, resolveProjection, type ResolvedProjection } from '../../../src/engine/projection.js';
import { renderList, withRecommId } from '../../../src/engine/response-body.js';
import { ItemCatalog } from '../../../src/state/item-catalog.js';
import { fullCollection } from '../../../src/state/memory.js';
import { item } from '../../support/tenant-fixture.js';

function catalogOf(): ItemCatalog {
  const catalog = new ItemCatalog();
  catalog.upsert(item('a', { category: 'shoes', attributes: { name: 'Alpha "quoted"', price: 20 } }));
  catalog.upsert(item('b', { attributes: { name: 'Beta\u2028', nested: { deep: [1, null] } } }));
  catalog.ensureId('placeholder');
  return catalog;
}

const PROJECTIONS: [string, ResolvedProjection][] = [
  ['full', resolveProjection({})],
  ['lean', resolveProjection({ returnProperties: false })],
  [
    'selective',
    resolveProjection({ includedProperties: ['attributes.name', 'category', 'attributes.nested'] }),
  ],
];

function scored(...entries: [number, number][]): RankedList & { scores: number[] } {
  return {
    ids: entries.map(([id]) => id),
    scores: entries.map(([, score]) => score),
    algorithm: 'co-occurrence',
  };
}

describe('renderList', () => {
  it.each(PROJECTIONS)('%s: the same JSON as serializing the projected items', (_name, projection) => {
    const catalog = catalogOf();
    const list = { ...scored([1, 0.5], [0, 1 / 3]), scenario: 'pdp' };
    const rendered = JSON.parse(`${renderList(catalog, list, projection)}}`) as unknown;
    const expected = [1, 0].map((id, i) => ({
      ...projectItem(catalog.rawDocument(id)!, projection.mode),
      score: list.scores[i],
    }));
    expect(rendered).toEqual({ items: expected, count: 2, algorithm: 'co-occurrence', scenario: 'pdp' });
  });

  it('unscored lists have no score; placeholders (no document) are left out of items and count', () => {
    const catalog = catalogOf();
    const list: RankedList = { ids: [2, 0], algorithm: 'recently-viewed' };
    expect(JSON.parse(`${renderList(catalog, list, PROJECTIONS[1][1])}}`)).toEqual({
      items: [{ itemId: 'a' }],
      count: 1,
      algorithm: 'recently-viewed',
    });
  });

  it('a score that is not finite is null, as JSON.stringify writes it', () => {
    const body = renderList(catalogOf(), scored([0, Infinity], [1, NaN]), PROJECTIONS[1][1]);
    expect((JSON.parse(`${body}}`) as { items: unknown[] }).items).toEqual([
      { itemId: 'a', score: null },
      { itemId: 'b', score: null },
    ]);
  });

  it('writes each score with the digits String() gives it', () => {
    const scores = [0.1 + 0.2, 1e21, 1e-7, -0, 5e-324, 123.456];
    const body = renderList(
      catalogOf(),
      scored(...scores.map((score): [number, number] => [0, score])),
      PROJECTIONS[1][1],
    );
    expect([...body.matchAll(/"score":([^}]*)\}/g)].map((match) => match[1])).toEqual(scores.map(String));
  });

  it('scores, each seen once, leave nothing behind in the old generation (docs/memory.md)', () => {
    const catalog = catalogOf();
    const oldSpace = () =>
      getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size;
    // A million distinct scores, as ten-item answers: as a template literal wrote them, V8 kept the text
    // of recent ones in a table until young collections had moved it to the old generation, about 40 MB.
    const growth = () => {
      fullCollection()();
      const start = oldSpace();
      let most = 0;
      for (let answer = 0; answer < 100_000; answer++) {
        const base = answer * 10 + Math.PI;
        renderList(
          catalog,
          scored(...Array.from({ length: 10 }, (_, k): [number, number] => [k % 2, base + k / 7])),
          PROJECTIONS[1][1],
        );
        if (answer % 1024 === 0) most = Math.max(most, oldSpace() - start);
      }
      return most;
    };
    // The first pass compiles the code, which moves V8's own data of it to the old generation (2-6 MB).
    growth();
    expect(growth()).toBeLessThan(4 * 2 ** 20);
  });

  it('carries filterRelaxation when the list has one', () => {
    const filterRelaxation = {
      droppedClauses: [`'price' < 5`],
      effectiveFilter: null,
      droppedEntireFilter: false,
      originalFilter: `'price' < 5`,
    };
    const body = renderList(catalogOf(), { ...scored([0, 1]), filterRelaxation }, PROJECTIONS[1][1]);
    expect(JSON.parse(`${body}}`)).toMatchObject({ filterRelaxation });
  });

  it('an item rendered earlier shows its new document once it changes', () => {
    const catalog = catalogOf();
    const names = () =>
      (
        JSON.parse(`${renderList(catalog, scored([0, 1]), PROJECTIONS[2][1])}}`) as {
          items: { attributes: { name: string } }[];
        }
      ).items[0].attributes.name;
    expect(names()).toBe('Alpha "quoted"');
    catalog.upsert(item('a', { attributes: { name: 'Renamed' } }));
    expect(names()).toBe('Renamed');
  });

  it('items rendered under one projection are not reused for another', () => {
    const catalog = catalogOf();
    const render = (projection: ResolvedProjection) =>
      JSON.parse(`${renderList(catalog, scored([0, 1]), projection)}}`) as { items: object[] };
    expect(render(PROJECTIONS[2][1]).items[0]).toHaveProperty('attributes');
    expect(render(PROJECTIONS[1][1]).items[0]).toEqual({ itemId: 'a', score: 1 });
    expect(render(PROJECTIONS[0][1]).items[0]).toHaveProperty('createdAt');
  });
});

describe('withRecommId', () => {
  it('closes the body with the recommId given', () => {
    const body = renderList(catalogOf(), scored([0, 1]), PROJECTIONS[1][1]);
    const answer = JSON.parse(withRecommId(body, 'r-1')) as { recommId: string; count: number };
    expect(answer.count).toBe(1);
    expect(answer.recommId).toBe('r-1');
  });
});
