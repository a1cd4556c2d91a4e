import { describe, expect, it } from 'vitest';
import { ALGORITHMS } from '../../../src/engine/algorithms/registry.js';
import { algorithmCode, newRecommId, recommIdBits } from '../../../src/engine/recomm-id.js';

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

  it("read a recommId's 128 bits as four words, and nothing from another text", () => {
    for (let i = 0; i < 50; i++) {
      const recommId = newRecommId('weighted-history');
      const hex = recommId.replaceAll('-', '');
      const expected = [0, 1, 2, 3].map((w) => Number.parseInt(hex.slice(8 * w, 8 * w + 8), 16) | 0);
      expect(Array.from(recommIdBits(recommId)!)).toEqual(expected);
    }
    expect(Array.from(recommIdBits('ffffffff-0000-4000-8000-00000000000a')!)).toEqual([
      -1,
      0x4000,
      0x80000000 | 0,
      10,
    ]);
    const valid = '0123abcd-ef01-4234-8567-89abcdef0123';
    for (const other of [
      valid.toUpperCase(),
      valid.replace('-', 'x'),
      `${valid}0`,
      valid.slice(1),
      valid.replace('a', 'g'),
      valid.replace('-', '0').replace('0123', '012-'),
      valid.replace('b', '\u00e9'),
    ])
      expect(recommIdBits(other)).toBeUndefined();
  });
});
