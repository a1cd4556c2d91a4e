/**
 * Item-to-item neighbours in CSR form: the neighbours of item i are neighbours[offsets[i]..offsets[i+1]),
 * best first, with their weights. Whatever produces them (the daemon's own builder, a batch artifact)
 * hands the engine this shape.
 */
export class ItemNeighbours {
  constructor(
    readonly offsets: Int32Array,
    readonly neighbours: Int32Array,
    readonly weights: Float32Array,
    /** Interactions the model was built from, to decide when it is stale. */
    readonly interactionCount: number,
    readonly builtAt: number,
  ) {}

  static empty(): ItemNeighbours {
    return new ItemNeighbours(new Int32Array(1), new Int32Array(0), new Float32Array(0), 0, 0);
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
