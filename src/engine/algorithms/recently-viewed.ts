import { TYPE_CODES } from '../../state/user-histories.js';
import { requestPools } from '../candidate-pool.js';
import { IdMarks } from '../id-marks.js';
import type { Algorithm } from './algorithm.js';

const seen = new IdMarks();

/** Distinct items of the user's view events, newest first; no scores, no fill, no geo. */
export const recentlyViewed: Algorithm = {
  name: 'recently-viewed',
  description: "Distinct items of the user's view events in the last 30 days, newest first.",
  logicTypes: ['recently-viewed'],
  models: [],
  geoLift: false,
  popularityFill: false,
  scored: false,
  candidates(context) {
    const { history, now } = context;
    const pool = requestPools.take(32);
    if (!history) return pool;
    seen.begin(context.tenant.catalog.size);
    const { items, types } = history.columns;
    const start = history.windowStart(now);
    // Scores only carry the order (newest highest); they are never shown.
    for (let i = history.end - 1; i >= start; i--) {
      if (types[i] === TYPE_CODES.view && seen.mark(items[i])) pool.push(items[i], i - history.start + 1);
    }
    return pool;
  },
};
