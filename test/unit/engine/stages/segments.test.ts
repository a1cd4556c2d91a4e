import { describe, expect, it } from 'vitest';
import { segments } from '../../../../src/engine/stages/segments.js';
import {
  buildTenant,
  contextOf,
  entriesOf,
  item,
  poolOf,
  rankIds,
  type RequestBody,
} from '../../../support/tenant-fixture.js';

/** Segments by category: A has a1 a2 a3, B has b1 b2, C has c1; n1 has no category (no segment). */
const tenant = buildTenant({
  items: [
    'seed',
    item('a1', { category: 'A' }),
    item('a2', { category: 'A' }),
    item('a3', { category: 'A' }),
    item('b1', { category: 'B' }),
    item('b2', { category: 'B' }),
    item('c1', { category: 'C' }),
    item('n1'),
  ],
  neighbours: [
    ['seed', 'a1', 0.9],
    ['seed', 'b1', 0.8],
    ['seed', 'a2', 0.7],
    ['seed', 'a3', 0.6],
    ['seed', 'n1', 0.5],
    ['seed', 'b2', 0.4],
    ['seed', 'c1', 0.3],
  ],
  segmentations: [{ segmentationId: 'by-category', type: 'property', property: 'category' }],
  scenarios: [
    { slug: 'balanced', logicType: 'item-to-item', segmentationId: 'by-category', itemsPerSegment: 2 },
    {
      slug: 'balanced-fixed',
      logicType: 'item-to-item',
      segmentationId: 'by-category',
      itemsPerSegment: 2,
      autoExpandSegments: false,
    },
    {
      slug: 'balanced-min',
      logicType: 'item-to-item',
      segmentationId: 'by-category',
      itemsPerSegment: 1,
      minItems: 6,
    },
  ],
});

const pool: [string, number][] = [
  ['a1', 0.9],
  ['b1', 0.8],
  ['a2', 0.7],
  ['a3', 0.6],
  ['n1', 0.5],
  ['b2', 0.4],
  ['c1', 0.3],
];

function balance(body: RequestBody, entries = pool): string[] {
  return entriesOf(tenant, segments(poolOf(tenant, entries), contextOf(tenant, body))).map(([id]) => id);
}

describe('stage 8, segments', () => {
  it('without a segmentation the pool is untouched', () => {
    expect(balance({ logicType: 'item-to-item', itemId: 'seed' })).toEqual(pool.map(([id]) => id));
  });

  it('round-robin over segments ordered by their best score, at most itemsPerSegment each, no segment last', () => {
    expect(balance({ scenario: 'balanced-fixed', itemId: 'seed' })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
      'b2',
    ]);
  });

  it('works from the scores, whatever the order of the pool', () => {
    expect(balance({ scenario: 'balanced-fixed', itemId: 'seed' }, [...pool].reverse())).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
      'b2',
    ]);
  });

  it('autoExpandSegments raises the cap while the list is shorter than count', () => {
    expect(balance({ scenario: 'balanced', itemId: 'seed', count: 6 })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
      'b2',
    ]);
    expect(balance({ scenario: 'balanced', itemId: 'seed', count: 7 })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
      'b2',
      'a3',
    ]);
  });

  it('autoExpandSegments raises the cap while the list is shorter than minItems', () => {
    expect(balance({ scenario: 'balanced-min', itemId: 'seed', count: 3 })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
      'b2',
    ]);
  });

  it('itemsPerSegment null means 1', () => {
    expect(balance({ scenario: 'balanced-fixed', itemId: 'seed', itemsPerSegment: null })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
    ]);
  });

  it('a segmentation override without itemsPerSegment balances without a cap', () => {
    expect(balance({ logicType: 'item-to-item', itemId: 'seed', segmentationId: 'by-category' })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
      'b2',
      'a3',
    ]);
  });

  it('an item of several segments counts for the first by name', () => {
    const tagged = buildTenant({
      items: [
        'seed',
        item('m', { attributes: { tags: ['zeta', 'alpha'] } }),
        item('z1', { attributes: { tags: ['zeta'] } }),
        item('al', { attributes: { tags: ['alpha'] } }),
      ],
      segmentations: [{ segmentationId: 'by-tags', type: 'property', property: 'attributes.tags' }],
    });
    const context = contextOf(tagged, {
      logicType: 'item-to-item',
      itemId: 'seed',
      segmentationId: 'by-tags',
      itemsPerSegment: 1,
      count: 2,
    });
    const entries: [string, number][] = [
      ['m', 0.9],
      ['al', 0.8],
      ['z1', 0.7],
    ];
    expect(entriesOf(tagged, segments(poolOf(tagged, entries), context)).map(([id]) => id)).toEqual([
      'm',
      'z1',
    ]);
  });

  it('applies to the ranked list, then the list is cut to count', () => {
    expect(rankIds(tenant, { scenario: 'balanced-fixed', itemId: 'seed', count: 5 })).toEqual([
      'a1',
      'b1',
      'c1',
      'n1',
      'a2',
    ]);
  });
});
