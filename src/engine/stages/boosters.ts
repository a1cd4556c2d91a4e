import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { forEachBoosted } from '../match-bits.js';

/** With more boosters than this, the classes of boosted entries no longer fit a byte: a later stage sorts. */
const MAX_CLASS_BITS = 8;

/** Per entry, which boosters applied to it (bit b for booster b). */
let classes = new Uint8Array(256);

/**
 * Stage 6: each matching booster multiplies the (already lifted) score; boosters stack. A pool that came
 * in sorted leaves sorted: multiplying by the same factors keeps the order among entries that the same
 * boosters applied to, so those classes are merged rather than the pool sorted again later.
 */
export function boosters(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { boosters: list } = context.config;
  if (list.length === 0 || pool.length === 0) return pool;
  const wasSorted = list.length <= MAX_CLASS_BITS && pool.isSorted();
  if (classes.length < pool.length) classes = new Uint8Array(pool.length * 2);
  classes.fill(0, 0, pool.length);
  const { scores } = pool;
  list.forEach((booster, b) => {
    const bit = 1 << b;
    forEachBoosted(
      booster,
      context.tenant.catalog,
      pool.idView(),
      context.now,
      (index) => {
        scores[index] *= booster.factor;
        classes[index] |= bit;
      },
      context.expressionContext,
    );
  });
  return wasSorted ? pool.sortByScoreWithin(classes, 1 << list.length) : pool;
}
