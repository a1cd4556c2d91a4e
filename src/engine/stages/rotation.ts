import { requestPools, type CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/**
 * Rotation (docs/guide.md, "Rotation"), between filters and boosters: the score of an item returned to
 * the identity k times within the window is multiplied by `(1 − rate)^k` (the event-loop thread worked
 * the factors out: RotatedItems). With rate 1 the factor is 0: such items leave the batch, so that the
 * candidate sequence reaches further, and join the end of the pool once it is gathered, below every
 * other candidate.
 */
export interface Rotation {
  /** Demotes the batch's rotated items; moves aside those with factor 0. */
  apply(batch: CandidatePool): void;
  /** Appends the items moved aside, scored below every other entry of the pool. */
  finish(pool: CandidatePool): void;
}

const none: Rotation = { apply: () => undefined, finish: () => undefined };

/** The rotation of a request: nothing to do without rotated items. */
export function rotation(context: PipelineContext): Rotation {
  const factors = context.rotationFactors;
  if (factors === undefined) return none;
  const hidden = requestPools.take(factors.size);
  return {
    apply(batch) {
      const { ids, scores } = batch;
      let moved = false;
      for (let i = 0; i < batch.length; i++) {
        const factor = factors.get(ids[i]);
        if (factor === undefined) continue;
        if (factor === 0) {
          hidden.push(ids[i], scores[i], batch.fill[i] === 1);
          moved = true;
        } else {
          // Dividing a negative score lowers it, as multiplying a positive one does.
          scores[i] = scores[i] >= 0 ? scores[i] * factor : scores[i] / factor;
        }
      }
      if (moved) batch.retain((i) => factors.get(ids[i]) !== 0);
    },
    finish(pool) {
      if (hidden.length === 0) return;
      let lowest = 0;
      for (let i = 0; i < pool.length; i++) lowest = Math.min(lowest, pool.scores[i]);
      // Sorting is stable: entries appended with the lowest score stay after those that have it.
      for (let i = 0; i < hidden.length; i++) pool.push(hidden.ids[i], lowest, hidden.fill[i] === 1);
      hidden.length = 0;
    },
  };
}
