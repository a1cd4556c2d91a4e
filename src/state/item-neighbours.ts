import { sharedArray } from '../linalg/growable.js';
import { HALF_VALUES, toHalves } from './half-float.js';

/** Most items a compact numbering covers: their sums (8 bytes each) stay within a core's L2 cache. */
const COMPACT_REACH = 16_384;

/**
 * Lists numbered over the items they reach: `local[k]` numbers `neighbours[k]`, `members[l]` is item l.
 * Two bytes a number, since they reach at most COMPACT_REACH items. `weights[k]` is the weight of entry k
 * in single precision (the same value as its half-precision bits): summing reads it directly, where a
 * lookup in the table of half values (half a megabyte) made the sums a quarter slower.
 */
export interface CompactNumbering {
  local: Uint16Array;
  members: Int32Array;
  localOf: Int32Array;
  weights: Float32Array;
}

/**
 * Item-to-item neighbours in CSR form: the neighbours of item i are neighbours[offsets[i]..offsets[i+1]),
 * best first, with their weights. Whatever produces them (the daemon's own builder, a batch artifact)
 * hands the engine this shape. Weights are kept in half precision (`HALF_VALUES[weights[k]]` reads one):
 * the models are the largest part of a daemon's memory after the histories.
 */
export class ItemNeighbours {
  /**
   * How many distinct items are some item's neighbour: no sum over lists meets more candidates, which
   * bounds a request's working set (an EASE model's few thousand items, say, however long its lists).
   */
  readonly reach: number;
  /**
   * For a model whose lists cover few items (EASE's few thousand), the lists again in a compact
   * numbering of those items: sums over them fit a small dense array in the CPU's caches instead of a
   * hash table.
   */
  readonly compact: CompactNumbering | undefined;

  /** Half-precision bits (half-float.ts). */
  readonly weights: Uint16Array;

  /** @param weights full precision, or half-precision bits as `weights` holds them */
  constructor(
    readonly offsets: Int32Array,
    readonly neighbours: Int32Array,
    weights: Float32Array | Uint16Array,
    /** Interactions the model was built from, to decide when it is stale. */
    readonly interactionCount: number,
    readonly builtAt: number,
    /** `reach` and `compact` as computed for these lists before (by the thread that loaded them). */
    derived?: { reach: number; compact: CompactNumbering | undefined },
  ) {
    this.weights = weights instanceof Uint16Array ? weights : toHalves(weights);
    if (derived) {
      this.reach = derived.reach;
      this.compact = derived.compact;
      return;
    }
    let bound = offsets.length - 1;
    for (let k = 0; k < neighbours.length; k++) bound = Math.max(bound, neighbours[k] + 1);
    const localOf = sharedArray(Int32Array, bound).fill(-1);
    let reach = 0;
    for (let k = 0; k < neighbours.length; k++) {
      if (localOf[neighbours[k]] < 0) localOf[neighbours[k]] = reach++;
    }
    this.reach = reach;
    // Worth its memory (a second index per entry) where lists are long over few items.
    if (reach > 0 && reach <= COMPACT_REACH && neighbours.length >= 8 * reach) {
      // In shared memory, like the lists they number (see servingNeighbours).
      const members = sharedArray(Int32Array, reach);
      const local = sharedArray(Uint16Array, neighbours.length);
      const compactWeights = sharedArray(Float32Array, neighbours.length);
      for (let k = 0; k < neighbours.length; k++) {
        local[k] = localOf[neighbours[k]];
        members[local[k]] = neighbours[k];
        compactWeights[k] = HALF_VALUES[this.weights[k]];
      }
      this.compact = { local, members, localOf, weights: compactWeights };
    }
  }

  static empty(): ItemNeighbours {
    return new ItemNeighbours(new Int32Array(1), new Int32Array(0), new Float32Array(0), 0, 0);
  }

  /** The weight of entry `k`. */
  weightAt(k: number): number {
    return HALF_VALUES[this.weights[k]];
  }

  get itemCount(): number {
    return this.offsets.length - 1;
  }

  /**
   * Where an item's neighbours begin and end in `neighbours`; an empty range for an item the model does
   * not know. Two numbers rather than a pair, since serving asks for dozens of ranges per request.
   */
  rangeStart(item: number): number {
    return item >= 0 && item < this.itemCount ? this.offsets[item] : 0;
  }

  rangeEnd(item: number): number {
    return item >= 0 && item < this.itemCount ? this.offsets[item + 1] : 0;
  }
}
