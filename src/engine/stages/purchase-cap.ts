import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

export const DEFAULT_PURCHASED_ITEMS_MAX_PERCENT = 10;

/**
 * Stage 9, only with a userId: items the user purchased in the last 90 days keep at most
 * max(1, floor(count × pct / 100)) places (none when pct is 0); the places they free go to the next
 * candidates that were not purchased.
 */
export function applyPurchaseCap(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { history, config, now } = context;
  if (!history || context.identity === undefined || pool.length === 0) return pool;
  const purchased = history.purchasedItems(now);
  if (purchased.size === 0) return pool;
  const percent = config.constraints.purchasedItemsMaxPercent ?? DEFAULT_PURCHASED_ITEMS_MAX_PERCENT;
  const allowed = percent <= 0 ? 0 : Math.max(1, Math.floor((config.count * percent) / 100));
  let kept = 0;
  return pool.retain((i) => {
    if (!purchased.has(pool.ids[i])) return true;
    kept++;
    return kept <= allowed;
  });
}
