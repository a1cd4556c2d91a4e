/**
 * Embedders turn item and query texts into vectors (docs/guide.md, "Vectors and search"): one interface for the
 * built-in hashing embedder and for a transformers model read from a local directory.
 */

/** The size of every vector (spec: "Each indexed item gets a vector of 384 dimensions"). */
export const VECTOR_DIMENSIONS = 384;

export type EmbedderKind = 'hashing' | 'transformers';

export interface Embedder {
  readonly kind: EmbedderKind;
  /** What `/health` names: `hashing-v1`, or the model directory's name. */
  readonly model: string;
  readonly dimensions: number;
  /**
   * One L2-normalised vector per text, as the rows of one flat array (texts.length × dimensions). A text
   * with nothing to embed (empty, only punctuation) gives a row of zeros.
   */
  embed(texts: readonly string[]): Promise<Float32Array>;
  /** Releases what the embedder holds (a model session). */
  close(): Promise<void>;
}
