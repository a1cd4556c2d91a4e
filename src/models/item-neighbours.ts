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

  /** Index range of an item's neighbours; empty for an item the model does not know. */
  range(item: number): [number, number] {
    if (item < 0 || item >= this.itemCount) return [0, 0];
    return [this.offsets[item], this.offsets[item + 1]];
  }
}
