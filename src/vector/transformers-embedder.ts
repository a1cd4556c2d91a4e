import { stat } from 'node:fs/promises';
import path from 'node:path';
import { env, pipeline, type FeatureExtractionPipeline } from '@huggingface/transformers';
import { VECTOR_DIMENSIONS, type Embedder } from './embedder.js';

/**
 * A sentence-embedding model in the transformers.js layout, read from a local directory and run on the
 * CPU by onnxruntime: its token vectors are mean-pooled over the attention mask and L2-normalised. The
 * directory holds `config.json`, `tokenizer.json`, `tokenizer_config.json` and `onnx/model.onnx` (fp32),
 * and the model must give 384-dimensional vectors. Nothing is ever downloaded.
 */

const D = VECTOR_DIMENSIONS;
/** Texts per model call: bounds the padded batch tensor without paying the per-call cost per text. */
const BATCH_SIZE = 32;
const REQUIRED_FILES = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  path.join('onnx', 'model.onnx'),
];
/** Texts with none of these have nothing to embed: their row is zeros, as with the hashing embedder. */
const HAS_WORD = /[\p{L}\p{N}]/u;

export class TransformersEmbedder implements Embedder {
  readonly kind = 'transformers' as const;
  readonly dimensions = D;

  private constructor(
    readonly model: string,
    private readonly extractor: FeatureExtractionPipeline,
  ) {}

  /** Loads the model in `modelDir`; rejects with an Error naming the directory when it cannot. */
  static async open(modelDir: string): Promise<TransformersEmbedder> {
    const dir = path.resolve(modelDir);
    await checkModelDir(dir);

    // Local files only. An absolute path is not a hub model id, so transformers.js reads the files under
    // it as they are (no `env.localModelPath` prefix); no file cache is written either.
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.useFSCache = false;
    let extractor: FeatureExtractionPipeline;
    try {
      extractor = await pipeline('feature-extraction', dir, {
        dtype: 'fp32',
        device: 'cpu',
        local_files_only: true,
      });
    } catch (error) {
      throw new Error(`cannot load the embedding model in ${dir}: ${errorMessage(error)}`);
    }

    const embedder = new TransformersEmbedder(path.basename(dir), extractor);
    try {
      // One probe text tells the model's vector size before anything is indexed with it.
      const probe = await extractor(['probe'], { pooling: 'mean', normalize: true });
      const size = probe.dims[probe.dims.length - 1];
      probe.dispose();
      if (size !== D) throw new Error(`it gives vectors of ${size} dimensions, not ${D}`);
    } catch (error) {
      await embedder.close();
      throw new Error(`the embedding model in ${dir} is not usable: ${errorMessage(error)}`);
    }
    return embedder;
  }

  async embed(texts: readonly string[]): Promise<Float32Array> {
    const out = new Float32Array(texts.length * D);
    const rows: number[] = [];
    const batch: string[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const output = await this.extractor(batch, { pooling: 'mean', normalize: true });
      const data = output.data as Float32Array;
      if (output.dims[output.dims.length - 1] !== D || data.length !== batch.length * D) {
        throw new Error(
          `the embedding model ${this.model} gave vectors of shape [${output.dims.join(', ')}]`,
        );
      }
      for (let i = 0; i < rows.length; i++) copyRow(data, i * D, out, rows[i] * D);
      output.dispose();
      rows.length = 0;
      batch.length = 0;
    };
    for (let row = 0; row < texts.length; row++) {
      if (!HAS_WORD.test(texts[row])) continue; // stays zeros
      rows.push(row);
      batch.push(texts[row]);
      if (batch.length === BATCH_SIZE) await flush();
    }
    await flush();
    return out;
  }

  async close(): Promise<void> {
    await this.extractor.dispose();
  }
}

/** Copies one pooled vector; one that normalising left non-finite (all zeros before) stays zeros. */
function copyRow(from: Float32Array, start: number, to: Float32Array, at: number): void {
  for (let d = 0; d < D; d++) if (!Number.isFinite(from[start + d])) return;
  to.set(from.subarray(start, start + D), at);
}

/** Rejects, naming the directory, unless it is one with the files a pipeline reads. */
async function checkModelDir(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw new Error(`the embedding model directory ${dir} does not exist`);
  for (const file of REQUIRED_FILES) {
    const fileInfo = await stat(path.join(dir, file)).catch(() => undefined);
    if (!fileInfo?.isFile()) throw new Error(`the embedding model directory ${dir} has no ${file}`);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
