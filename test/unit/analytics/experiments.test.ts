import { describe, expect, it } from 'vitest';
import { compareRates, normalCdf } from '../../../src/analytics/significance.js';
import { EXPERIMENT } from '../../../src/contract/scenarios.js';
import { variantOf } from '../../../src/engine/experiments.js';

describe('the two-proportion z-test', () => {
  it('gives the normal distribution function', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 6);
    expect(normalCdf(1.959964)).toBeCloseTo(0.975, 5);
    expect(normalCdf(-1.644854)).toBeCloseTo(0.05, 5);
  });

  it('matches the textbook example: 200 of 1,000 against 250 of 1,000', () => {
    // Pooled p = 0.225, SE = 0.018675, z = 2.6774, two-sided p = 0.0074; unpooled SE = 0.018641.
    expect(compareRates({ successes: 200, trials: 1000 }, { successes: 250, trials: 1000 })).toEqual({
      metric: 'ctr',
      lift: 0.25,
      pValue: 0.0074,
      difference95: [0.0135, 0.0865],
    });
  });

  it('calls equal rates not significant, and has no answer without trials', () => {
    expect(compareRates({ successes: 50, trials: 500 }, { successes: 50, trials: 500 }).pValue).toBe(1);
    expect(compareRates({ successes: 0, trials: 0 }, { successes: 5, trials: 10 })).toEqual({
      metric: 'ctr',
      lift: null,
      pValue: null,
      difference95: null,
    });
    expect(compareRates({ successes: 0, trials: 10 }, { successes: 5, trials: 10 }).lift).toBeNull();
  });
});

describe('experiment assignment', () => {
  const experiment = EXPERIMENT.parse({
    slug: 'home-test',
    baseScenario: 'home',
    variants: [
      { scenario: 'home-a', weight: 50 },
      { scenario: 'home-b', weight: 30 },
      { scenario: 'home-c', weight: 20 },
    ],
  });

  it('is sticky and follows the weights within 2 points over 10,000 users', () => {
    const counts = new Map<string, number>();
    for (let u = 0; u < 10_000; u++) {
      const userId = `user-${u}`;
      const variant = variantOf(experiment, userId).scenario;
      expect(variantOf(experiment, userId).scenario).toBe(variant);
      counts.set(variant, (counts.get(variant) ?? 0) + 1);
    }
    expect(Math.abs(counts.get('home-a')! / 10_000 - 0.5)).toBeLessThan(0.02);
    expect(Math.abs(counts.get('home-b')! / 10_000 - 0.3)).toBeLessThan(0.02);
    expect(Math.abs(counts.get('home-c')! / 10_000 - 0.2)).toBeLessThan(0.02);
  });

  it('keeps the assignments of earlier versions: changing the hash would move running users', () => {
    const assigned = Object.fromEntries(
      ['user-1', 'user-2', 'user-3', 'user-4', 'user-5', 'user-6', 'user-7', 'user-8'].map((userId) => [
        userId,
        variantOf(experiment, userId).scenario,
      ]),
    );
    expect(assigned).toEqual({
      'user-1': 'home-b',
      'user-2': 'home-c',
      'user-3': 'home-a',
      'user-4': 'home-b',
      'user-5': 'home-b',
      'user-6': 'home-b',
      'user-7': 'home-c',
      'user-8': 'home-c',
    });
  });

  it('assigns independently per experiment', () => {
    const other = { ...experiment, slug: 'another-test' };
    let same = 0;
    for (let u = 0; u < 1000; u++)
      if (variantOf(experiment, `u${u}`).scenario === variantOf(other, `u${u}`).scenario) same++;
    // Independent draws agree with probability 0.5² + 0.3² + 0.2² = 0.38.
    expect(same / 1000).toBeGreaterThan(0.3);
    expect(same / 1000).toBeLessThan(0.46);
  });

  it('never assigns a variant of weight 0, wherever it stands, and refuses an experiment of no weight', () => {
    const variants = experiment.variants;
    for (const weights of [
      [0, 1, 1],
      [1, 0, 1],
      [1, 1, 0],
      [0, 0, 1],
    ]) {
      const weighted = { ...experiment, variants: variants.map((v, i) => ({ ...v, weight: weights[i] })) };
      expect(EXPERIMENT.safeParse(weighted).success).toBe(true);
      const assigned = new Set<string>();
      for (let u = 0; u < 2000; u++) assigned.add(variantOf(weighted, `user-${u}`).scenario);
      expect([...assigned].sort()).toEqual(variants.filter((_, i) => weights[i] > 0).map((v) => v.scenario));
    }
    const none = { ...experiment, variants: variants.map((v) => ({ ...v, weight: 0 })) };
    expect(EXPERIMENT.safeParse(none).success).toBe(false);
    expect(EXPERIMENT.safeParse({ ...experiment, variants: [{ ...variants[0], weight: -1 }] }).success).toBe(
      false,
    );
  });

  it('rejects variants naming one scenario twice', () => {
    expect(
      EXPERIMENT.safeParse({ ...experiment, variants: [experiment.variants[0], experiment.variants[0]] })
        .success,
    ).toBe(false);
  });
});
