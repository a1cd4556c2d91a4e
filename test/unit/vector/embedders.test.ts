import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTinyModel } from '../../../fixtures/tiny-model/make-tiny-model.js';
import { VECTOR_DIMENSIONS as D, type Embedder } from '../../../src/vector/embedder.js';
import { openEmbedder } from '../../../src/vector/embedders.js';
import { ServingState } from '../../../src/state/tenant-state.js';
import { HashingEmbedder } from '../../../src/vector/hashing-embedder.js';
import { VectorIndexer } from '../../../src/models/vector-indexer.js';

function row(vectors: Float32Array, i: number): Float32Array {
  return vectors.subarray(i * D, (i + 1) * D);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let d = 0; d < D; d++) sum += a[d] * b[d];
  return sum;
}

function norm(a: Float32Array): number {
  return Math.sqrt(dot(a, a));
}

/** The cosine of texts[0] with each of the other texts (rows are unit length). */
async function similarities(embedder: Embedder, texts: string[]): Promise<number[]> {
  const vectors = await embedder.embed(texts);
  return texts.slice(1).map((_, i) => dot(row(vectors, 0), row(vectors, i + 1)));
}

describe('HashingEmbedder', () => {
  const embedder = new HashingEmbedder();

  it('names itself and gives one 384-dimensional unit row per text', async () => {
    expect(embedder.kind).toBe('hashing');
    expect(embedder.model).toBe('hashing-v1');
    expect(embedder.dimensions).toBe(384);
    const texts = ['red running shoes', 'Stainless steel kettle, 1.7 l', 'x'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toBeInstanceOf(Float32Array);
    expect(vectors.length).toBe(texts.length * D);
    for (let i = 0; i < texts.length; i++) expect(norm(row(vectors, i))).toBeCloseTo(1, 5);
    expect(await embedder.embed([])).toHaveLength(0);
  });

  it('gives zeros for a text with no word', async () => {
    const vectors = await embedder.embed(['', '   ', '!!! -- ?', 'shoes']);
    for (let i = 0; i < 3; i++) expect(row(vectors, i).every((value) => value === 0)).toBe(true);
    expect(norm(row(vectors, 3))).toBeCloseTo(1, 5);
  });

  it('is deterministic, across calls and instances', async () => {
    const texts = ['Nike Air Zoom Pegasus 39', 'organic coffee beans 1 kg'];
    const first = await embedder.embed(texts);
    expect(await embedder.embed(texts)).toEqual(first);
    expect(await new HashingEmbedder().embed(texts)).toEqual(first);
  });

  it('writes one row in place with embedOne, leaving the rest of the array alone', async () => {
    const out = new Float32Array(3 * D).fill(7);
    embedder.embedOne('red running shoes', out, D);
    expect(row(out, 1)).toEqual(await embedder.embed(['red running shoes']));
    expect(row(out, 0).every((value) => value === 7)).toBe(true);
    expect(row(out, 2).every((value) => value === 7)).toBe(true);
  });

  it('puts similar product names closer than unrelated ones', async () => {
    const [reordered, unrelated] = await similarities(embedder, [
      'red running shoes',
      'running shoes red size 42',
      'stainless steel kettle',
    ]);
    expect(reordered).toBeGreaterThan(0.5);
    expect(unrelated).toBeLessThan(0.2);
    // Close spellings share character 3-grams.
    const [plural, other] = await similarities(embedder, ['running shoe', 'running shoes', 'running kettle']);
    expect(plural).toBeGreaterThan(other);
  });

  it('ignores case, accents and compatibility forms', async () => {
    const vectors = await embedder.embed([
      'Crème Brûlée CAFÉ',
      'creme brulee cafe',
      'ＣＲＥＭＥ brulee café',
    ]);
    expect(row(vectors, 1)).toEqual(row(vectors, 0));
    expect(row(vectors, 2)).toEqual(row(vectors, 0));
  });

  it('embeds long texts and texts beyond ASCII', async () => {
    const long = `${'word '.repeat(5000)}${Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ')}`;
    const vectors = await embedder.embed([long, '日本語のテキスト', 'Ελληνικά κείμενα', '𝐁𝐨𝐥𝐝 letters']);
    for (let i = 0; i < 4; i++) expect(norm(row(vectors, i))).toBeCloseTo(1, 5);
    // Mathematical bold letters decompose (NFKD) to plain ones.
    const [bold] = await similarities(embedder, ['bold letters', '𝐁𝐨𝐥𝐝 letters']);
    expect(bold).toBeCloseTo(1, 5);
  });
});

describe('openEmbedder', () => {
  it('gives the hashing embedder without a model directory', async () => {
    const embedder = await openEmbedder(undefined);
    expect(embedder).toBeInstanceOf(HashingEmbedder);
    expect(embedder.model).toBe('hashing-v1');
    await embedder.close();
  });

  it('rejects a missing model directory with an Error naming it', async () => {
    const missing = path.join(tmpdir(), 'nextrec-no-such-model-dir');
    await expect(openEmbedder(missing)).rejects.toThrow(missing);
  });
});

describe('TransformersEmbedder (a tiny generated model)', () => {
  let dir: string;
  let modelDir: string;
  let embedder: Embedder;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'nextrec-embedders-'));
    modelDir = path.join(dir, 'tiny-bert');
    await makeTinyModel(modelDir);
    embedder = await openEmbedder(modelDir);
  });

  afterAll(async () => {
    await embedder?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is named after its directory', () => {
    expect(embedder.kind).toBe('transformers');
    expect(embedder.model).toBe('tiny-bert');
    expect(embedder.dimensions).toBe(384);
  });

  it('gives one 384-dimensional unit row per text, in batches, zeros for no words', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `red running shoes size ${i}`);
    texts[5] = '';
    texts[40] = '?!';
    const vectors = await embedder.embed(texts);
    expect(vectors.length).toBe(texts.length * D);
    for (let i = 0; i < texts.length; i++) {
      if (i === 5 || i === 40) expect(row(vectors, i).every((value) => value === 0)).toBe(true);
      else expect(norm(row(vectors, i))).toBeCloseTo(1, 5);
    }
    // A row does not depend on the batch it was embedded in.
    expect(await embedder.embed([texts[69]])).toEqual(row(vectors, 69));
  });

  it('is deterministic, across calls and model directories', async () => {
    const texts = ['stainless steel kettle', 'blue cotton shirt'];
    const first = await embedder.embed(texts);
    expect(await embedder.embed(texts)).toEqual(first);
    const again = path.join(dir, 'tiny-bert-again');
    await makeTinyModel(again);
    const other = await openEmbedder(again);
    try {
      expect(other.model).toBe('tiny-bert-again');
      expect(await other.embed(texts)).toEqual(first);
    } finally {
      await other.close();
    }
  });

  it('puts texts sharing words closer than unrelated ones', async () => {
    const [sharing, unrelated] = await similarities(embedder, [
      'red running shoes',
      'running shoes red size 42',
      'stainless steel kettle',
    ]);
    expect(sharing).toBeGreaterThan(0.5);
    expect(unrelated).toBeLessThan(0.3);
    expect(sharing).toBeGreaterThan(unrelated);
  });

  it('rejects a directory without a model, naming it', async () => {
    await expect(openEmbedder(dir)).rejects.toThrow(
      `the embedding model directory ${dir} has no config.json`,
    );
  });

  it('rejects a model that does not load, naming its directory', async () => {
    const broken = path.join(dir, 'broken');
    await makeTinyModel(broken);
    writeFileSync(path.join(broken, 'onnx', 'model.onnx'), 'not a model');
    await expect(openEmbedder(broken)).rejects.toThrow(`cannot load the embedding model in ${broken}`);
  });

  it('rejects a model whose vectors are not 384-dimensional', async () => {
    const narrow = path.join(dir, 'narrow');
    await makeTinyModel(narrow, { hiddenSize: 16 });
    await expect(openEmbedder(narrow)).rejects.toThrow(
      `the embedding model in ${narrow} is not usable: it gives vectors of 16 dimensions, not 384`,
    );
  });
});

describe('query vectors', () => {
  it('embeds a search text once while it is remembered, and gives the same vector again', async () => {
    const embedder = new HashingEmbedder();
    const texts: string[] = [];
    const counting = Object.assign(Object.create(embedder) as HashingEmbedder, {
      embed: (batch: string[]) => {
        texts.push(...batch);
        return embedder.embed(batch);
      },
    });
    const indexer = new VectorIndexer(counting, new ServingState());
    const first = await indexer.embedQuery('red running shoes');
    expect(await indexer.embedQuery('red running shoes')).toBe(first);
    expect(await indexer.embedQuery('blue shirt')).not.toEqual(first);
    expect(texts).toEqual(['red running shoes', 'blue shirt']);
  });
});
