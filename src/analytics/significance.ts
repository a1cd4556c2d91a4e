/**
 * Whether a variant's rate differs from the control's by more than chance (docs/guide.md, "Analytics and experiments"): the
 * two-proportion z-test with a pooled standard error, and the 95% interval of the difference with the
 * unpooled one.
 */

import { studentTQuantile, studentTTwoSided } from './student-t.js';

/** The standard normal distribution function, by the error function (Abramowitz and Stegun 7.1.26). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

export interface Comparison {
  metric: 'ctr';
  /** The variant's rate over the control's, minus 1; null when the control's rate is 0. */
  lift: number | null;
  /** Two-sided p-value of the difference; null without trials on either side. */
  pValue: number | null;
  /** 95% interval of the difference of the rates (variant − control); null without trials. */
  difference95: [number, number] | null;
}

const Z_95 = 1.959963984540054;

function round(value: number, places: number): number {
  const scale = 10 ** places;
  return Math.round(value * scale) / scale;
}

/** Compares `successes` of `trials` (the variant) with those of the control. */
export function compareRates(
  control: { successes: number; trials: number },
  variant: { successes: number; trials: number },
): Comparison {
  if (control.trials === 0 || variant.trials === 0)
    return { metric: 'ctr', lift: null, pValue: null, difference95: null };
  // A rate above 1 (more clicks than impressions logged) is read as 1.
  const p1 = Math.min(1, control.successes / control.trials);
  const p2 = Math.min(1, variant.successes / variant.trials);
  const pooled = Math.min(1, (control.successes + variant.successes) / (control.trials + variant.trials));
  const pooledSe = Math.sqrt(pooled * (1 - pooled) * (1 / control.trials + 1 / variant.trials));
  const pValue = pooledSe === 0 ? (p1 === p2 ? 1 : 0) : 2 * (1 - normalCdf(Math.abs(p2 - p1) / pooledSe));
  const se = Math.sqrt((p1 * (1 - p1)) / control.trials + (p2 * (1 - p2)) / variant.trials);
  const difference = p2 - p1;
  return {
    metric: 'ctr',
    lift: p1 === 0 ? null : round(p2 / p1 - 1, 4),
    pValue: round(pValue, 4),
    difference95: [round(difference - Z_95 * se, 4), round(difference + Z_95 * se, 4)],
  };
}

/** A sample's size, mean and (n − 1) variance. */
export interface Sample {
  count: number;
  mean: number;
  variance: number;
}

/**
 * How a variant's mean compares with the control's by Welch's t-test (docs/guide.md, "Revenue"), as a
 * Comparison of means: lift the variant's mean over the control's, minus 1 (null when the control's mean
 * is 0); pValue and difference95 (variant − control) null with fewer than two in either sample.
 */
export type MeanComparison = Omit<Comparison, 'metric'>;

/**
 * Welch's t-test of the variant's mean against the control's: unequal variances, the Welch–Satterthwaite
 * degrees of freedom, and the 95% interval of the difference from the same t distribution.
 */
export function compareMeans(control: Sample, variant: Sample): MeanComparison {
  const lift = control.mean === 0 ? null : round(variant.mean / control.mean - 1, 4);
  if (control.count < 2 || variant.count < 2) return { lift, pValue: null, difference95: null };
  const a = Math.max(0, control.variance) / control.count;
  const b = Math.max(0, variant.variance) / variant.count;
  const difference = variant.mean - control.mean;
  const se = Math.sqrt(a + b);
  if (se === 0)
    return {
      lift,
      pValue: difference === 0 ? 1 : 0,
      difference95: [round(difference, 4), round(difference, 4)],
    };
  const df = (a + b) ** 2 / (a ** 2 / (control.count - 1) + b ** 2 / (variant.count - 1));
  const t = difference / se;
  const pValue = studentTTwoSided(t, df);
  const margin = studentTQuantile(0.975, df) * se;
  return {
    lift,
    pValue: round(pValue, 4),
    difference95: [round(difference - margin, 4), round(difference + margin, 4)],
  };
}
