import { describe, expect, it } from 'vitest';
import { random } from '../../../bench/support/random.js';

describe('random (the benchmarks’ seeded numbers)', () => {
  it('gives the same sequence for a seed, run after run', () => {
    const next = random(42);
    expect([next(), next(), next()]).toEqual([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
    const other = random(7);
    expect([other(), other(), other()]).toEqual([
      0.011704753153026104, 0.06195825757458806, 0.97690763277933,
    ]);
  });

  it('stays in [0, 1)', () => {
    const next = random(1);
    const values = Array.from({ length: 10_000 }, () => next());
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
  });
});
