import type { Embedder } from './embedder.js';
import { HashingEmbedder } from './hashing-embedder.js';

/**
 * The configured embedder: the transformers model in `modelDir` when one is set (not empty), else the
 * built-in hashing embedder. transformers.js (and onnxruntime under it) is imported only when a model is used.
 */
export async function openEmbedder(modelDir: string | undefined): Promise<Embedder> {
  if (!modelDir) return new HashingEmbedder();
  const { TransformersEmbedder } = await import('./transformers-embedder.js');
  return TransformersEmbedder.open(modelDir);
}
