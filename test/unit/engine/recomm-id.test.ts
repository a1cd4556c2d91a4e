import { describe, expect, it } from 'vitest';
import { ALGORITHMS } from '../../../src/engine/algorithms/registry.js';
import { algorithmCode, algorithmOfAnswer, newRecommId } from '../../../src/engine/recomm-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('recommIds', () => {
  it('are new UUIDs each time whose first four digits name the algorithm', () => {
    const first = newRecommId('co-occurrence');
    const second = newRecommId('co-occurrence');
    expect(first).toMatch(UUID);
    expect(second).not.toBe(first);
    expect(first.slice(0, 4)).toBe(algorithmCode('co-occurrence'));
    expect(newRecommId('popularity').slice(0, 4)).toBe(algorithmCode('popularity'));
  });

  it('give every algorithm of the registry a code of its own', () => {
    const names = ALGORITHMS.map((algorithm) => algorithm.name);
    expect(new Set(names.map(algorithmCode)).size).toBe(names.length);
  });

  it("read an answer's algorithm after its items, whatever the items' documents hold", () => {
    const body =
      '{"items":[{"itemId":"a","attributes":{"algorithm":"fake","note":"\\"algorithm\\":\\"x"}}],' +
      '"count":1,"algorithm":"weighted-history","scenario":"home",' +
      '"query":{"original":"\\"algorithm\\":\\"evil\\""}';
    expect(algorithmOfAnswer(body)).toBe('weighted-history');
    expect(algorithmOfAnswer('{"items":[]')).toBe('');
  });
});
