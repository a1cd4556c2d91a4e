import { segmentsOfItem } from '../item-segments.js';
import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

/** Items of no segment form the last group. */
const NO_SEGMENT = '\u0000none';

/**
 * Round-robin over segment groups ordered by their best score, taking at most `cap` per group.
 * Returns the pool indexes in their new order.
 */
function interleave(groups: number[][], cap: number): number[] {
  const order: number[] = [];
  for (let round = 0; round < cap; round++) {
    let took = false;
    for (const group of groups) {
      if (round < group.length) {
        order.push(group[round]);
        took = true;
      }
    }
    if (!took) break;
  }
  return order;
}

/**
 * Stage 8: balances the list across the segments of the linked segmentation. An item of several
 * segments counts for the first by name; itemsPerSegment caps each segment, and autoExpandSegments
 * raises the cap one step at a time while the list is shorter than max(minItems, count).
 */
export function segments(pool: CandidatePool, context: PipelineContext): CandidatePool {
  const { segmentation, itemsPerSegment, autoExpandSegments, count, minItems } = context.config;
  if (!segmentation || pool.length === 0) return pool;
  pool.sortByScore();
  const byName = new Map<string, number[]>();
  for (let i = 0; i < pool.length; i++) {
    const names = segmentsOfItem(segmentation, context.tenant.catalog, pool.ids[i]);
    const name = names.length > 0 ? names[0] : NO_SEGMENT;
    let group = byName.get(name);
    if (!group) byName.set(name, (group = []));
    group.push(i);
  }
  // Groups are already in best-score order of their first member; the group of no segment goes last.
  const groups = [...byName.entries()]
    .sort(([a, ga], [b, gb]) => (a === NO_SEGMENT ? 1 : b === NO_SEGMENT ? -1 : ga[0] - gb[0]))
    .map(([, group]) => group);
  const largest = Math.max(...groups.map((group) => group.length));
  const wanted = Math.max(minItems, count);
  let cap = itemsPerSegment ?? largest;
  let order = interleave(groups, cap);
  while (autoExpandSegments && order.length < wanted && cap < largest) {
    cap++;
    order = interleave(groups, cap);
  }
  return pool.reorder(order);
}
