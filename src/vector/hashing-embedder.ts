import { VECTOR_DIMENSIONS, type Embedder } from './embedder.js';

/**
 * The built-in embedder: signed feature hashing, with no model and no dependency.
 *
 * The text is lowercased and Unicode-normalised (NFKD, combining marks dropped, so `Café` reads as
 * `cafe`), then split into words (runs of letters and digits). Its features are the words, the pairs of
 * adjacent words, and the character 3-grams of each word framed by boundary marks (`#shoe#` gives `#sh`,
 * `sho`, `hoe`, `oe#`), which let close spellings (`shoe`, `shoes`) share most of their weight. Each
 * feature hashes to one of the 384 buckets with a sign, is weighted by its family and by 1 + ln(count),
 * and the sum is L2-normalised.
 */

const D = VECTOR_DIMENSIONS;

/** Feature families, how much one occurrence of each weighs, and the seeds that keep their hashes apart. */
const WORD = 0;
const BIGRAM = 1;
const TRIGRAM = 2;
const FAMILY_WEIGHTS = Float64Array.of(1.0, 0.6, 0.45);
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const WORD_SEED = FNV_OFFSET;
const BIGRAM_SEED = FNV_OFFSET ^ 0x5bd1e995;
const TRIGRAM_SEED = FNV_OFFSET ^ 0x27d4eb2f;
/** Frames each word for its 3-grams; never a word character, so no 3-gram inside a word looks like one. */
const BOUNDARY = 0x23; // '#'

/** Letters and digits beyond ASCII (checked one character at a time, only for non-ASCII text). */
const WORD_CHAR = /[\p{L}\p{N}]/u;
const COMBINING_MARKS = /\p{M}+/gu;
const ASCII_ONLY = /^[\0-\x7f]*$/;

/** murmur3's finaliser: spreads FNV's weak low bits over the whole word before bucket and sign are taken. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** One FNV-1a step over a 16-bit code unit (or a whole 32-bit hash, for word pairs). */
function step(hash: number, value: number): number {
  return Math.imul(hash ^ value, FNV_PRIME);
}

/** How many UTF-16 units the letter or digit at `i` spans (2 beyond the BMP), or 0 for anything else. */
function wordCharWidth(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code < 0x80) return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) ? 1 : 0;
  const point = text.codePointAt(i) as number;
  const width = point > 0xffff ? 2 : 1;
  return WORD_CHAR.test(String.fromCodePoint(point)) ? width : 0;
}

export class HashingEmbedder implements Embedder {
  readonly kind = 'hashing' as const;
  readonly model = 'hashing-v1';
  readonly dimensions = D;

  // Scratch reused by every call: an open-addressing table from feature hash to its count (a slot is
  // taken when its stamp is the current call's), the taken slots in order, and the vector being summed.
  private capacity = 1024;
  private keys = new Uint32Array(this.capacity);
  private counts = new Uint32Array(this.capacity);
  private families = new Uint8Array(this.capacity);
  private stamps = new Uint32Array(this.capacity);
  private taken = new Int32Array(this.capacity >>> 1);
  private takenCount = 0;
  private stamp = 0;
  private readonly sum = new Float64Array(D);

  async embed(texts: readonly string[]): Promise<Float32Array> {
    const out = new Float32Array(texts.length * D);
    for (let i = 0; i < texts.length; i++) this.embedOne(texts[i], out, i * D);
    return out;
  }

  async close(): Promise<void> {}

  /** Writes the text's vector to `out[offset .. offset + 384)`: unit length, or zeros when it has no word. */
  embedOne(text: string, out: Float32Array, offset: number): void {
    this.countFeatures(normalise(text));
    const sum = this.sum;
    sum.fill(0);
    for (let t = 0; t < this.takenCount; t++) {
      const slot = this.taken[t];
      const hash = this.keys[slot];
      const weight = FAMILY_WEIGHTS[this.families[slot]] * (1 + Math.log(this.counts[slot]));
      // The low bit gives the sign, the rest the bucket: independent after fmix32.
      sum[(hash >>> 1) % D] += hash & 1 ? -weight : weight;
    }
    let squares = 0;
    for (let d = 0; d < D; d++) squares += sum[d] * sum[d];
    const scale = squares > 0 ? 1 / Math.sqrt(squares) : 0;
    for (let d = 0; d < D; d++) out[offset + d] = sum[d] * scale;
  }

  /** Fills the table with the features of a normalised text. */
  private countFeatures(text: string): void {
    this.stamp = (this.stamp + 1) >>> 0;
    if (this.stamp === 0) {
      // After 2^32 calls: stamps from long ago could match again.
      this.stamps.fill(0);
      this.stamp = 1;
    }
    this.takenCount = 0;
    let previousWord = 0;
    let hasPrevious = false;
    let i = 0;
    const length = text.length;
    while (i < length) {
      // Skip to the next word, then find its end.
      let width = wordCharWidth(text, i);
      if (width === 0) {
        i++;
        continue;
      }
      const start = i;
      while (width > 0) {
        i += width;
        width = i < length ? wordCharWidth(text, i) : 0;
      }
      const end = i;

      let word = WORD_SEED;
      for (let k = start; k < end; k++) word = step(word, text.charCodeAt(k));
      this.add(fmix32(word), WORD);
      if (hasPrevious) this.add(fmix32(step(step(BIGRAM_SEED, previousWord), word)), BIGRAM);
      previousWord = word;
      hasPrevious = true;

      // 3-grams of `#word#`: position k covers the framed characters k-1, k, k+1.
      for (let k = start; k < end; k++) {
        const a = k === start ? BOUNDARY : text.charCodeAt(k - 1);
        const b = text.charCodeAt(k);
        const c = k + 1 === end ? BOUNDARY : text.charCodeAt(k + 1);
        this.add(fmix32(step(step(step(TRIGRAM_SEED, a), b), c)), TRIGRAM);
      }
    }
  }

  /** Counts one occurrence of a feature. */
  private add(hash: number, family: number): void {
    if ((this.takenCount + 1) * 2 > this.capacity) this.grow();
    const mask = this.capacity - 1;
    let slot = hash & mask;
    while (this.stamps[slot] === this.stamp) {
      if (this.keys[slot] === hash && this.families[slot] === family) {
        this.counts[slot]++;
        return;
      }
      slot = (slot + 1) & mask;
    }
    this.stamps[slot] = this.stamp;
    this.keys[slot] = hash;
    this.families[slot] = family;
    this.counts[slot] = 1;
    this.taken[this.takenCount++] = slot;
  }

  /** Doubles the table (long texts only), re-placing this call's features. */
  private grow(): void {
    const { keys, counts, families, taken, takenCount } = this;
    this.capacity *= 2;
    const mask = this.capacity - 1;
    this.keys = new Uint32Array(this.capacity);
    this.counts = new Uint32Array(this.capacity);
    this.families = new Uint8Array(this.capacity);
    this.stamps = new Uint32Array(this.capacity);
    this.taken = new Int32Array(this.capacity >>> 1);
    for (let t = 0; t < takenCount; t++) {
      const old = taken[t];
      let slot = keys[old] & mask;
      while (this.stamps[slot] === this.stamp) slot = (slot + 1) & mask;
      this.stamps[slot] = this.stamp;
      this.keys[slot] = keys[old];
      this.counts[slot] = counts[old];
      this.families[slot] = families[old];
      this.taken[t] = slot;
    }
  }
}

/** Compatibility-decomposed, without combining marks, lowercase; ASCII text only needs lowercasing. */
function normalise(text: string): string {
  if (ASCII_ONLY.test(text)) return text.toLowerCase();
  return text.normalize('NFKD').replace(COMBINING_MARKS, '').toLowerCase();
}
