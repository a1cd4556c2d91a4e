import type { Constraints } from '../../contract/scenarios.js';
import { categoryCodeOf } from '../../state/item-catalog.js';
import { DAY_MS } from '../../state/user-histories.js';
import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { longTailThreshold } from '../long-tail.js';
import { freshnessDates } from '../freshness.js';

export const FRESHNESS_BOOST = 1.5;

/** Constraint auto-relax round 0 (as configured), 1 or 2 (CONTRACT, "Recommendation details"). */
export type RelaxRound = 0 | 1 | 2;

interface RoundConstraints {
  maxPerCategory?: number;
  freshnessBoostDays?: number;
  injectLongTail: boolean;
  longTailPercentage: number;
}

export function constraintsForRound(constraints: Constraints, round: RelaxRound): RoundConstraints {
  const { maxPerCategory, freshnessBoostDays, injectLongTail = false, longTailPercentage } = constraints;
  if (round === 0)
    return {
      maxPerCategory,
      freshnessBoostDays,
      injectLongTail,
      longTailPercentage: longTailPercentage ?? 0,
    };
  if (round === 1) {
    return {
      maxPerCategory: maxPerCategory === undefined ? undefined : maxPerCategory * 2,
      freshnessBoostDays: freshnessBoostDays === undefined ? undefined : freshnessBoostDays * 2,
      injectLongTail: true,
      longTailPercentage: longTailPercentage === undefined ? 10 : Math.min(100, longTailPercentage + 10),
    };
  }
  return {
    maxPerCategory: undefined,
    freshnessBoostDays: freshnessBoostDays === undefined ? undefined : freshnessBoostDays * 4,
    injectLongTail: true,
    longTailPercentage: Math.min(50, (longTailPercentage ?? 0) + 20),
  };
}

/** Per-category counts of the request being ranked; reset through the list of codes touched. */
let perCategory = new Int32Array(64);

/** At most `max` items per category, best first; items without a category are not capped. */
function diversity(pool: CandidatePool, context: PipelineContext, max: number | undefined): void {
  if (max === undefined) return;
  const { rankingCodes, categoryTable } = context.tenant.catalog;
  if (perCategory.length < categoryTable.size) perCategory = new Int32Array(categoryTable.size * 2);
  const touched: number[] = [];
  pool.sortByScore().retain((i) => {
    const code = categoryCodeOf(rankingCodes[pool.ids[i]]);
    if (code === 0) return true;
    if (perCategory[code]++ === 0) touched.push(code);
    return perCategory[code] <= max;
  });
  for (const code of touched) perCategory[code] = 0;
}

/** Items newer than the window (by the tenant's freshness date, else createdAt) get score × 1.5. */
function freshness(pool: CandidatePool, context: PipelineContext, days: number | undefined): void {
  if (days === undefined || !context.config.algorithm.scored) return;
  const dates = freshnessDates(context.tenant);
  const since = context.now - days * DAY_MS;
  for (let i = 0; i < pool.length; i++) {
    const date = dates(pool.ids[i]);
    if (date !== undefined && date >= since) pool.scores[i] *= FRESHNESS_BOOST;
  }
}

/**
 * Reserves about `percentage` of the requested slots for long-tail items: when too few are among the top
 * `count`, the best long-tail items below trade places with the weakest others in the top `count`. Each
 * slot keeps its score, so ties cannot push a promoted item back out in the re-sort that follows, and the
 * best promoted item takes the best freed slot, so both groups keep their order.
 */
function injectLongTail(pool: CandidatePool, context: PipelineContext, percentage: number): void {
  const count = context.config.count;
  const reserved = Math.max(1, Math.round((count * percentage) / 100));
  const threshold = longTailThreshold(context.tenant, context.now);
  const counts = context.tenant.recentCounts;
  const isLongTail = (i: number) => counts.count(pool.ids[i]) < threshold;
  pool.sortByScore();
  const top = Math.min(count, pool.length);
  let inside = 0;
  for (let i = 0; i < top; i++) if (isLongTail(i)) inside++;
  const promoted: number[] = [];
  const freed: number[] = [];
  let weakest = top - 1;
  for (let below = top; below < pool.length && inside < reserved; below++) {
    if (!isLongTail(below)) continue;
    while (weakest >= 0 && isLongTail(weakest)) weakest--;
    if (weakest < 0) break;
    promoted.push(below);
    freed.push(weakest--);
    inside++;
  }
  freed.reverse().forEach((slot, k) => swapEntries(pool, slot, promoted[k]));
}

function swapEntries(pool: CandidatePool, a: number, b: number): void {
  [pool.ids[a], pool.ids[b]] = [pool.ids[b], pool.ids[a]];
  [pool.fill[a], pool.fill[b]] = [pool.fill[b], pool.fill[a]];
}

/** Stage 7: diversity, freshness, long-tail injection, then re-sort and cut to the pool size. */
export function constraints(pool: CandidatePool, context: PipelineContext, round: RelaxRound): CandidatePool {
  const settings = constraintsForRound(context.config.constraints, round);
  diversity(pool, context, settings.maxPerCategory);
  freshness(pool, context, settings.freshnessBoostDays);
  if (settings.injectLongTail && settings.longTailPercentage > 0) {
    injectLongTail(pool, context, settings.longTailPercentage);
  }
  return pool.sortByScore().truncate(context.poolSize);
}
