import { describe, expect, it } from 'vitest';
import { summarizeAnswer, type AnswerSummary } from '../../../src/engine/answer-summary.js';
import type { RankedList } from '../../../src/engine/pipeline.js';
import { resolveProjection } from '../../../src/engine/projection.js';
import { renderList } from '../../../src/engine/response-body.js';
import { buildTenant, item } from '../../support/tenant-fixture.js';

/** Attributes whose text looks like the answer's own structure. */
const TRICKY = [
  { name: 'plain', price: 3.5 },
  { name: 'quote " and backslash \\ and {braces} [brackets]', count: 2 },
  {
    tags: ['a', 'b'],
    count: 7,
    itemId: 'not-this-one',
    nested: { itemId: 'nor-this', list: [[1], { x: '}' }] },
  },
  { name: '],"count":1,"algorithm":"fake"', 'weird "key"': { '{': ']' } },
  { name: 'ünïcödé ✓ \u2028 line', empty: {}, none: null, yes: true },
];

function answerOf(list: Partial<RankedList>, projection = resolveProjection({})): string {
  const tenant = buildTenant({
    items: [
      ...TRICKY.map((attributes, i) => item(`item-${i}`, { category: i % 2 ? 'shoes' : null, attributes })),
      item('quote"id\\x', { attributes: { name: 'an id that needs escaping' } }),
    ],
  });
  const ids = Array.from({ length: tenant.catalog.size }, (_, id) => id);
  return renderList(
    tenant.catalog,
    { ids, algorithm: 'popularity', scores: ids.map((id) => 1 / (id + 1)), ...list },
    projection,
  );
}

/** The same summary, read by parsing the whole answer (it ends before its recommId: a brace closes it). */
function parsedSummary(body: string): AnswerSummary {
  const answer = JSON.parse(`${body}}`) as {
    items: { itemId: string }[];
    algorithm?: string;
    scenario?: string;
    experiment?: { slug: string };
  };
  return {
    itemIds: answer.items.map((entry) => entry.itemId),
    algorithm: answer.algorithm ?? '',
    scenario: answer.scenario ?? '',
    experiment: answer.experiment?.slug ?? '',
  };
}

describe('summarizeAnswer', () => {
  it('reads item ids, algorithm, scenario and experiment as parsing the whole answer does', () => {
    const answers = [
      answerOf({}),
      answerOf({ scores: undefined, algorithm: 'recently-viewed' }),
      answerOf({ scenario: 'home "page"', experiment: { slug: 'exp-1', variant: 'b' } }),
      answerOf({
        scenario: 'cart',
        filterRelaxation: {
          droppedClauses: ['"a" in tags'],
          effectiveFilter: null,
          droppedEntireFilter: true,
          originalFilter: '"a" in tags',
        },
      }),
      answerOf({}, resolveProjection({ returnProperties: false })),
      answerOf({}, resolveProjection({ includedProperties: ['nested.itemId', 'count'] })),
      answerOf({ ids: [] }),
      // A search answer: facets and the query follow the list.
      `${answerOf({ scenario: 's' })},"facets":{"tags":[{"value":"a","count":1}],"count":[]},"query":{"original":"\\"}]","semanticText":"x","extractedFilters":null}`,
    ];
    for (const body of answers) expect(summarizeAnswer(body)).toEqual(parsedSummary(body));
    expect(summarizeAnswer(answers[0]).itemIds).toEqual([
      'item-0',
      'item-1',
      'item-2',
      'item-3',
      'item-4',
      'quote"id\\x',
    ]);
    expect(summarizeAnswer(answers[2]).experiment).toBe('exp-1');
  });

  it('refuses a text of another shape', () => {
    expect(() => summarizeAnswer('{"data":[]}')).toThrow();
    expect(() => summarizeAnswer('{"items":[{"name":"x","itemId":"a"}]')).toThrow();
    expect(() => summarizeAnswer('{"items":[{"itemId":"a"')).toThrow();
    expect(() => summarizeAnswer('{"items":[{"itemId":"a"}] "count":1')).toThrow();
  });
});
