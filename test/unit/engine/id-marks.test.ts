import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdMarks, ScoreAccumulator } from '../../../src/engine/id-marks.js';

type Operation = ['add', number, number] | ['exclude', number];

/** What the accumulator should hold: ids in first-seen order with their sums. */
function reference(operations: Operation[]): [number, number][] {
  const sums = new Map<number, number>();
  for (const operation of operations) {
    const [kind, id] = operation;
    const before = sums.get(id);
    if (kind === 'exclude') sums.set(id, -Infinity);
    else sums.set(id, (before ?? 0) + operation[2]);
  }
  return [...sums];
}

function contents(accumulator: ScoreAccumulator): [number, number][] {
  return Array.from({ length: accumulator.size }, (_, k) => [accumulator.idAt(k), accumulator.sumAt(k)]);
}

const operations = fc.array(
  fc.oneof(
    fc.tuple(fc.constant('add' as const), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 1, max: 9 })),
    fc.tuple(fc.constant('exclude' as const), fc.integer({ min: 0, max: 5_000 })),
  ),
  { maxLength: 3_000, size: 'max' },
);

describe('ScoreAccumulator', () => {
  it('sums by id in first-seen order, excluded ids stay -Infinity, however many ids were expected', () => {
    const accumulator = new ScoreAccumulator();
    fc.assert(
      fc.property(operations, fc.integer({ min: 0, max: 4_000 }), (list, expected) => {
        accumulator.begin(expected);
        for (const operation of list) {
          if (operation[0] === 'add') accumulator.add(operation[1], operation[2]);
          else accumulator.exclude(operation[1]);
        }
        expect(contents(accumulator)).toEqual(reference(list));
      }),
      { numRuns: 200 },
    );
  });

  it('ids that collide in the table (same low hash bits) are kept apart', () => {
    const accumulator = new ScoreAccumulator();
    accumulator.begin(1);
    // Multiples of a large power of two share the low bits of any multiplicative hash's input.
    const ids = Array.from({ length: 600 }, (_, i) => i * 65_536);
    ids.forEach((id, i) => accumulator.add(id, i));
    ids.forEach((id, i) => accumulator.add(id, i));
    expect(contents(accumulator)).toEqual(ids.map((id, i) => [id, 2 * i]));
  });

  it('begin starts from empty', () => {
    const accumulator = new ScoreAccumulator();
    accumulator.begin(10);
    accumulator.add(3, 1);
    accumulator.begin(10);
    accumulator.add(4, 2);
    expect(contents(accumulator)).toEqual([[4, 2]]);
  });
});

describe('IdMarks', () => {
  it('marks each id once per set; begin starts a new set', () => {
    const marks = new IdMarks();
    marks.begin(10);
    expect([marks.mark(3), marks.mark(3), marks.has(3), marks.has(4)]).toEqual([true, false, true, false]);
    marks.begin(20);
    expect([marks.has(3), marks.mark(15), marks.has(15)]).toEqual([false, true, true]);
  });
});
