/**
 * Vector search (docs/guide.md, "Vectors and search"): a generated catalog of product texts embedded with the
 * built-in hashing embedder, then searched through an HNSW index per quantization (f32, i8) built by the
 * vectors job's code and searched by the daemon's (TenantVectors: the breadth ef per request, quantized
 * candidates scored again on the full vectors), against exact search over the same vectors in the same
 * run. Prints one JSON line
 * per measurement: the embedder's texts per second, exact search's latency, and per quantization its build
 * time and, for every search breadth (ef) of the sweep, recall@10 and single-query latency; the line of
 * the default ef is judged against the target (recall@10 ≥ 0.95 with p99 ≤ 2 ms).
 *
 *   npm run build && node dist/bench/vectors.js [--items 100000] [--queries 1000] [--ef 64]
 */
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MetricKind, exactSearch, type Matches } from 'usearch';
import { buildIndex } from '../jobs/vectors/vectors-job.js';
import { TenantVectors } from '../src/vector/tenant-vectors.js';
import { Rng, WeightedSampler, zipfWeights } from '../fixtures/prng.js';
import { VECTOR_DIMENSIONS } from '../src/vector/embedder.js';
import { HashingEmbedder } from '../src/vector/hashing-embedder.js';
import { positiveInteger } from './support/options.js';
import { quantile } from './support/quantile.js';

const D = VECTOR_DIMENSIONS;
const K = 10;
const SEED = 20_240_601;
const VOCABULARY_STREAM = 1;
const CATALOG_STREAM = 2;
const QUERY_STREAM = 3;
const PICK_STREAM = 4;

const EMBED_TARGET = 20_000;
const RECALL_TARGET = 0.95;
const P99_TARGET_MS = 2;
const TARGET = `recall>=${RECALL_TARGET}, p99<=${P99_TARGET_MS}ms`;

/** As the vectors job builds its indexes (jobs/vectors/vectors-job.ts). */
const CONNECTIVITY = 16;
const EXPANSION_ADD = 128;
const BUILD_THREADS = 2;
const SWEEP = [16, 32, 64, 128, 256];
const QUANTIZATIONS = ['f32', 'i8'] as const;

/** One query in this many is an indexed item's own vector; the rest are held-out product texts. */
const EXISTING_EVERY = 5;
/** Untimed searches before each timed pass, so that JIT and caches are warm. */
const WARMUP_QUERIES = 100;
/** Queries whose exact answers are checked against a plain scan, to show the baseline is exact. */
const SCAN_CHECKS = 5;
/** Scores within this of the 10th exact score count as among the 10 nearest (ties, rounding). */
const TIE_EPSILON = 1e-5;

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '1000' },
    ef: { type: 'string', default: '64' },
  },
  strict: false,
});
const itemCount = positiveInteger('--items', values.items);
const queryCount = positiveInteger('--queries', values.queries);
const defaultEf = positiveInteger('--ef', values.ef);
const sweep = [...new Set([...SWEEP, defaultEf])].sort((a, b) => a - b);

// ---------------------------------------------------------------------------------------------------
// The catalog: departments of product nouns, brands that mostly sell in one department, and a long tail
// of collection names, all drawn with power laws so that texts cluster as a real catalog's do.
// ---------------------------------------------------------------------------------------------------

interface Department {
  heads: readonly string[];
  qualifiers: readonly string[];
  materials: readonly string[];
  sizes: (rng: Rng) => string;
}

const pickSize =
  (...options: readonly string[]) =>
  (rng: Rng) =>
    rng.pick(options);

const DEPARTMENTS: readonly Department[] = [
  {
    heads: ['shoe', 'sneaker', 'boot', 'sandal', 'loafer', 'slipper', 'trainer', 'clog'],
    qualifiers: ['running', 'trail', 'walking', 'hiking', 'casual', 'dress', 'court'],
    materials: ['leather', 'suede', 'canvas', 'mesh', 'rubber', 'knit'],
    sizes: (rng) => `size ${36 + rng.int(12)}`,
  },
  {
    heads: ['shirt', 'tee', 'polo', 'henley', 'blouse', 'sweater', 'hoodie', 'cardigan'],
    qualifiers: ['oxford', 'linen', 'graphic', 'crew', 'v-neck', 'long-sleeve', 'button-down'],
    materials: ['cotton', 'linen', 'merino', 'cashmere', 'polyester', 'jersey', 'fleece'],
    sizes: pickSize('XS', 'S', 'M', 'L', 'XL', 'XXL'),
  },
  {
    heads: ['jacket', 'parka', 'coat', 'vest', 'blazer', 'anorak', 'poncho'],
    qualifiers: ['rain', 'puffer', 'bomber', 'shell', 'ski', 'trench', 'field'],
    materials: ['nylon', 'wool', 'down', 'gore-tex', 'denim', 'tweed'],
    sizes: pickSize('XS', 'S', 'M', 'L', 'XL', 'XXL'),
  },
  {
    heads: ['dress', 'skirt', 'jumpsuit', 'trousers', 'jeans', 'shorts', 'leggings'],
    qualifiers: ['midi', 'maxi', 'wrap', 'pleated', 'cargo', 'chino', 'wide-leg'],
    materials: ['satin', 'silk', 'denim', 'cotton', 'viscose', 'corduroy', 'velvet'],
    sizes: (rng) => `W${26 + rng.int(12)} L${28 + 2 * rng.int(4)}`,
  },
  {
    heads: ['skillet', 'saucepan', 'wok', 'kettle', 'knife', 'board', 'pot', 'tray', 'grater'],
    qualifiers: ['frying', 'chef', 'paring', 'cutting', 'stock', 'baking', 'roasting'],
    materials: ['cast-iron', 'stainless', 'ceramic', 'bamboo', 'enamel', 'carbon-steel', 'copper'],
    sizes: (rng) => `${16 + 2 * rng.int(8)} cm`,
  },
  {
    heads: ['mug', 'plate', 'bowl', 'glass', 'jug', 'teapot', 'carafe', 'tumbler'],
    qualifiers: ['coffee', 'dinner', 'salad', 'wine', 'espresso', 'serving', 'cereal'],
    materials: ['porcelain', 'stoneware', 'glass', 'crystal', 'earthenware', 'melamine'],
    sizes: (rng) => `set of ${rng.pick([2, 4, 6, 8, 12])}`,
  },
  {
    heads: ['lamp', 'light', 'chandelier', 'lantern', 'sconce', 'bulb', 'spotlight'],
    qualifiers: ['desk', 'floor', 'pendant', 'table', 'wall', 'ceiling', 'reading'],
    materials: ['brass', 'glass', 'rattan', 'linen', 'aluminium', 'marble', 'paper'],
    sizes: (rng) => `${20 + 5 * rng.int(16)} cm`,
  },
  {
    heads: ['chair', 'table', 'sofa', 'shelf', 'bench', 'stool', 'cabinet', 'desk', 'bed'],
    qualifiers: ['dining', 'office', 'coffee', 'side', 'lounge', 'bar', 'corner'],
    materials: ['oak', 'walnut', 'pine', 'teak', 'steel', 'velvet', 'boucle', 'rattan'],
    sizes: (rng) => `${60 + 10 * rng.int(15)} x ${40 + 10 * rng.int(8)} cm`,
  },
  {
    heads: ['towel', 'duvet', 'pillow', 'blanket', 'throw', 'rug', 'curtain', 'sheet'],
    qualifiers: ['bath', 'hand', 'beach', 'king', 'double', 'runner', 'blackout'],
    materials: ['cotton', 'linen', 'wool', 'bamboo', 'jute', 'microfibre', 'flannel'],
    sizes: pickSize('single', 'double', 'king', 'super king', '50 x 90 cm', '140 x 200 cm'),
  },
  {
    heads: ['headphones', 'speaker', 'charger', 'cable', 'keyboard', 'mouse', 'webcam', 'hub'],
    qualifiers: ['bluetooth', 'usb-c', 'gaming', 'studio', 'portable', 'mechanical', 'docking'],
    materials: ['aluminium', 'plastic', 'silicone', 'braided', 'carbon', 'rubber'],
    sizes: pickSize('1 m', '2 m', '3 m', '65 w', '100 w', '20 w'),
  },
  {
    heads: ['cream', 'serum', 'shampoo', 'conditioner', 'soap', 'cleanser', 'oil', 'balm'],
    qualifiers: ['face', 'hand', 'body', 'night', 'hair', 'lip', 'eye'],
    materials: ['argan', 'shea', 'aloe', 'vitamin-c', 'hyaluronic', 'charcoal', 'rosehip'],
    sizes: (rng) => `${rng.pick([15, 30, 50, 100, 200, 250, 500])} ml`,
  },
  {
    heads: ['backpack', 'bag', 'wallet', 'belt', 'scarf', 'hat', 'cap', 'gloves', 'watch'],
    qualifiers: ['tote', 'crossbody', 'duffel', 'bucket', 'beanie', 'travel', 'laptop'],
    materials: ['leather', 'canvas', 'nylon', 'wool', 'cashmere', 'straw', 'vegan-leather'],
    sizes: (rng) => `${rng.pick([10, 15, 20, 25, 30, 40])} l`,
  },
  {
    heads: ['puzzle', 'robot', 'doll', 'bear', 'blocks', 'train', 'kite', 'game'],
    qualifiers: ['jigsaw', 'building', 'plush', 'wooden', 'remote-control', 'board', 'stacking'],
    materials: ['wood', 'plush', 'plastic', 'cardboard', 'felt', 'tin'],
    sizes: (rng) => `ages ${rng.pick([1, 2, 3, 4, 6, 8, 10, 12])}+`,
  },
  {
    heads: ['tent', 'sleeping bag', 'mat', 'bottle', 'stove', 'torch', 'chair', 'cooler'],
    qualifiers: ['camping', 'trekking', 'ultralight', 'family', 'insulated', 'folding', 'solar'],
    materials: ['ripstop', 'nylon', 'titanium', 'aluminium', 'stainless', 'foam', 'polyester'],
    sizes: (rng) => `${rng.pick([1, 2, 3, 4, 6])} person`,
  },
];

// prettier-ignore
const COLOURS = [
  'black', 'white', 'navy', 'grey', 'charcoal', 'beige', 'cream', 'ivory', 'red', 'burgundy', 'green',
  'olive', 'sage', 'teal', 'blue', 'cobalt', 'sky', 'turquoise', 'brown', 'tan', 'camel', 'chocolate',
  'pink', 'blush', 'coral', 'orange', 'rust', 'yellow', 'mustard', 'gold', 'silver', 'bronze', 'purple',
  'lavender', 'lilac', 'plum', 'khaki', 'mint', 'taupe', 'natural', 'multicolour', 'stone', 'sand',
];

// prettier-ignore
const ADJECTIVES = [
  'classic', 'modern', 'vintage', 'slim', 'relaxed', 'lightweight', 'heavy-duty', 'waterproof',
  'breathable', 'insulated', 'padded', 'quilted', 'ribbed', 'knitted', 'woven', 'printed', 'striped',
  'checked', 'floral', 'minimalist', 'rustic', 'compact', 'portable', 'foldable', 'adjustable',
  'ergonomic', 'wireless', 'rechargeable', 'cordless', 'smart', 'digital', 'premium', 'essential',
  'everyday', 'organic', 'recycled', 'soft', 'cosy', 'durable', 'rugged', 'sleek', 'stretch', 'cropped',
  'oversized', 'fitted', 'tapered', 'wide', 'high-rise', 'low-profile', 'non-slip', 'anti-glare',
  'noise-cancelling', 'quick-dry', 'stackable', 'nesting', 'reversible', 'convertible', 'handmade',
  'artisan', 'heritage', 'deluxe', 'ultra', 'mini', 'large', 'double', 'tall', 'round', 'square', 'oval',
  'textured', 'matte', 'glossy', 'brushed', 'polished', 'distressed', 'washed', 'embroidered', 'scented',
  'unscented', 'dimmable', 'magnetic', 'thermal', 'vented', 'cushioned', 'supportive', 'hypoallergenic',
  'fragrance-free', 'outdoor', 'indoor', 'kids', 'mens', 'womens', 'unisex', 'baby', 'pet',
  'professional', 'studio', 'pro', 'plus', 'max', 'lite', 'limited', 'signature', 'original', 'soft-touch',
  'sustainable', 'vegan', 'seamless', 'stretchy', 'warm', 'cool', 'airy', 'chunky', 'fine', 'bold',
  'retro', 'nordic', 'japanese', 'italian', 'french', 'coastal', 'alpine', 'urban', 'festival',
];

// prettier-ignore
const SYLLABLES = [
  'ka', 'lo', 'mi', 'ra', 'ven', 'tor', 'sa', 'el', 'no', 'vi', 'ta', 'ro', 'lu', 'den', 'mar', 'ko',
  'ri', 'zen', 'pa', 'nor', 'bel', 'ca', 'sti', 'fen', 'ga', 'hal', 'im', 'jo', 'ler', 'mon', 'ne', 'os',
  'pri', 'qu', 'sel', 'tri', 'ul', 'var', 'wen', 'xa', 'yor', 'za', 'bri', 'dal', 'fro', 'gre', 'har',
];

/** Distinct pseudo-words of 2 or 3 syllables: brand and collection names. */
function pseudoWords(rng: Rng, count: number, taken: Set<string>): string[] {
  const words: string[] = [];
  while (words.length < count) {
    const syllables = 2 + rng.int(2);
    let word = '';
    for (let i = 0; i < syllables; i++) word += rng.pick(SYLLABLES);
    if (taken.has(word)) continue;
    taken.add(word);
    words.push(word);
  }
  return words;
}

interface Noun {
  department: number;
  text: string;
}

class Catalog {
  private readonly nouns: Noun[] = [];
  /** Per department, its nouns, drawn with a power law (a few are most of its items). */
  private readonly departmentNouns: number[][] = [];
  private readonly departmentSamplers: WeightedSampler[] = [];
  private readonly nounSampler: WeightedSampler;
  private readonly brands: string[];
  private readonly brandDepartment: Int32Array;
  private readonly brandSampler: WeightedSampler;
  private readonly collections: string[];
  private readonly collectionSampler: WeightedSampler;
  private readonly adjectiveSampler = new WeightedSampler(zipfWeights(ADJECTIVES.length, 0.8));
  private readonly colourSampler = new WeightedSampler(zipfWeights(COLOURS.length, 1.0));
  readonly vocabulary: number;

  constructor(rng: Rng) {
    DEPARTMENTS.forEach((department, d) => {
      const own: number[] = [];
      // Each head noun alone and with 3 of its department's qualifiers: about 450 product nouns.
      for (const head of department.heads) {
        const order = Int32Array.from(department.qualifiers, (_, i) => i);
        rng.shuffle(order);
        const qualified = [...order.subarray(0, 3)].map((q) => `${department.qualifiers[q]} ${head}`);
        for (const text of [head, ...qualified]) {
          own.push(this.nouns.length);
          this.nouns.push({ department: d, text });
        }
      }
      rng.shuffle(own);
      this.departmentNouns.push(own);
      this.departmentSamplers.push(new WeightedSampler(zipfWeights(own.length, 1.0)));
    });
    const nounOrder = Int32Array.from(this.nouns, (_, i) => i);
    rng.shuffle(nounOrder);
    const nounWeights = new Float64Array(this.nouns.length);
    zipfWeights(this.nouns.length, 0.9).forEach((weight, rank) => (nounWeights[nounOrder[rank]] = weight));
    this.nounSampler = new WeightedSampler(nounWeights);

    const taken = new Set<string>();
    this.brands = pseudoWords(rng, 1_200, taken);
    this.brandDepartment = Int32Array.from(this.brands, () => rng.int(DEPARTMENTS.length));
    this.brandSampler = new WeightedSampler(zipfWeights(this.brands.length, 1.0));
    this.collections = pseudoWords(rng, 2_400, taken);
    this.collectionSampler = new WeightedSampler(zipfWeights(this.collections.length, 0.9));
    const words = new Set<string>([...COLOURS, ...ADJECTIVES, ...taken]);
    for (const noun of this.nouns) for (const word of noun.text.split(' ')) words.add(word);
    for (const department of DEPARTMENTS) for (const material of department.materials) words.add(material);
    this.vocabulary = words.size;
  }

  get nounCount(): number {
    return this.nouns.length;
  }

  /** One product's text: brand, collection, adjectives, colour, material, product noun, model and size. */
  text(rng: Rng): string {
    const brand = this.brandSampler.sample(rng);
    // A brand sells mostly in its own department, its best-known products most.
    const home = this.brandDepartment[brand];
    const noun = rng.chance(0.8)
      ? this.nouns[this.departmentNouns[home][this.departmentSamplers[home].sample(rng)]]
      : this.nouns[this.nounSampler.sample(rng)];
    const department = DEPARTMENTS[noun.department];
    const parts = [this.brands[brand]];
    if (rng.chance(0.6)) parts.push(this.collections[this.collectionSampler.sample(rng)]);
    parts.push(ADJECTIVES[this.adjectiveSampler.sample(rng)]);
    if (rng.chance(0.35)) parts.push(ADJECTIVES[this.adjectiveSampler.sample(rng)]);
    if (rng.chance(0.8)) parts.push(COLOURS[this.colourSampler.sample(rng)]);
    if (rng.chance(0.7)) parts.push(rng.pick(department.materials));
    parts.push(noun.text);
    if (rng.chance(0.5)) {
      const letters = String.fromCharCode(65 + rng.int(26), 65 + rng.int(26));
      parts.push(`${letters}-${100 + rng.int(9_900)}`);
    }
    if (rng.chance(0.7)) parts.push(department.sizes(rng));
    return parts.join(' ');
  }
}

/** `count` distinct texts, none of them in `exclude`. */
function distinctTexts(catalog: Catalog, rng: Rng, count: number, exclude?: Set<string>): string[] {
  const seen = new Set<string>();
  const texts: string[] = [];
  for (let attempts = 0; texts.length < count; attempts++) {
    if (attempts > count * 20) throw new Error(`could not generate ${count} distinct texts`);
    const text = catalog.text(rng);
    if (seen.has(text) || exclude?.has(text)) continue;
    seen.add(text);
    texts.push(text);
  }
  return texts;
}

// ---------------------------------------------------------------------------------------------------
// Measuring.
// ---------------------------------------------------------------------------------------------------

function round(value: number, digits = 3): number {
  return Number(value.toFixed(digits));
}

/**
 * A full garbage collection, then a turn of the event loop: an index's native memory goes only when its
 * wrapper is collected (V8 does not see that memory, so it would not hurry) and its finaliser has run,
 * which Node defers to the event loop. (The flag makes `gc` available to new contexts.)
 */
async function collectGarbage(): Promise<void> {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  await setImmediate();
  await setImmediate();
}

function rssMb(): number {
  return Math.round(process.memoryUsage().rss / 2 ** 20);
}

function dot(matrix: Float32Array, row: number, query: Float32Array): number {
  let sum = 0;
  const base = row * D;
  for (let d = 0; d < D; d++) sum += matrix[base + d] * query[d];
  return sum;
}

interface Exact {
  keys: Int32Array[];
  /** Per query, the 10th best inner product: anything scoring as much is among the 10 nearest. */
  kth: Float64Array;
  p50Ms: number;
  p99Ms: number;
}

/** The exact 10 nearest of every query, each query timed alone. */
function exactAnswers(matrix: Float32Array, queries: Float32Array[]): Exact {
  const keys: Int32Array[] = [];
  const kth = new Float64Array(queries.length);
  const times = new Float64Array(queries.length);
  for (let q = 0; q < Math.min(WARMUP_QUERIES, queries.length); q++) {
    exactSearch(matrix, queries[q], D, K, MetricKind.IP, 1);
  }
  queries.forEach((query, q) => {
    const start = performance.now();
    const matches = exactSearch(matrix, query, D, K, MetricKind.IP, 1) as Matches;
    times[q] = performance.now() - start;
    keys.push(Int32Array.from(matches.keys, Number));
    kth[q] = 1 - matches.distances[matches.distances.length - 1];
  });
  times.sort();
  return { keys, kth, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}

/** Checks a few exact answers against a plain scan: the baseline must be exact. */
function checkExact(matrix: Float32Array, rows: number, queries: Float32Array[], exact: Exact): void {
  for (let q = 0; q < Math.min(SCAN_CHECKS, queries.length); q++) {
    const scores = new Float64Array(rows);
    for (let row = 0; row < rows; row++) scores[row] = dot(matrix, row, queries[q]);
    const kth = scores.sort().reverse()[K - 1];
    if (Math.abs(kth - exact.kth[q]) > TIE_EPSILON) {
      throw new Error(`exact search's 10th score ${exact.kth[q]} is not the scan's ${kth} (query ${q})`);
    }
  }
}

/** As usearch casts a vector to i8 (magnitude-scaled to [-127, 127], truncated), into `out` at `offset`. */
function toI8(vector: Float32Array, from: number, out: Int8Array, offset: number): void {
  let squares = 0;
  for (let d = 0; d < D; d++) squares += vector[from + d] * vector[from + d];
  const scale = squares > 0 ? 127 / Math.sqrt(squares) : 0;
  for (let d = 0; d < D; d++)
    out[offset + d] = Math.trunc(Math.max(-127, Math.min(127, vector[from + d] * scale)));
}

/**
 * Recall@10 of exact search over the i8 codes themselves: the most an i8 index can reach, since it ranks
 * by the codes' inner products however wide it searches.
 */
function quantizedExactRecall(matrix: Float32Array, queries: Float32Array[], exact: Exact): number {
  const codes = new Int8Array(itemCount * D);
  for (let row = 0; row < itemCount; row++) toI8(matrix, row * D, codes, row * D);
  let hits = 0;
  queries.forEach((query, q) => {
    const code = new Int8Array(D);
    toI8(query, 0, code, 0);
    const matches = exactSearch(codes, code, D, K, MetricKind.IP, 1) as Matches;
    for (const key of matches.keys) if (dot(matrix, Number(key), query) >= exact.kth[q] - TIE_EPSILON) hits++;
  });
  return hits / (K * queries.length);
}

interface Pass {
  ef: number;
  /** Share of the 10 returned that score at least the 10th exact score (ties count as found). */
  recall: number;
  /** Share of the exact answer's keys returned. */
  keyRecall: number;
  recallHeldOut: number;
  recallExisting: number;
  p50Ms: number;
  p99Ms: number;
}

function searchPass(
  vectors: TenantVectors,
  quantization: (typeof QUANTIZATIONS)[number],
  ef: number,
  matrix: Float32Array,
  queries: Float32Array[],
  existing: boolean[],
  exact: Exact,
): Pass {
  const options = { ef, threshold: 0, quantization, accept: () => true };
  for (let q = 0; q < Math.min(WARMUP_QUERIES, queries.length); q++) vectors.search(queries[q], K, options);
  const times = new Float64Array(queries.length);
  const found = { all: 0, keys: 0, heldOut: 0, existing: 0 };
  let existingCount = 0;
  for (let q = 0; q < queries.length; q++) {
    const query = queries[q];
    const start = performance.now();
    // Item ids are the rows here (see measureQuantization).
    const top = vectors.search(query, K, options).ids;
    times[q] = performance.now() - start;
    const truth = new Set(exact.keys[q]);
    let hits = 0;
    for (const row of top) {
      if (dot(matrix, row, query) >= exact.kth[q] - TIE_EPSILON) hits++;
      if (truth.has(row)) found.keys++;
    }
    found.all += hits;
    if (existing[q]) {
      found.existing += hits;
      existingCount++;
    } else found.heldOut += hits;
  }
  times.sort();
  const heldOutCount = queries.length - existingCount;
  return {
    ef,
    recall: found.all / (K * queries.length),
    keyRecall: found.keys / (K * queries.length),
    recallHeldOut: heldOutCount > 0 ? found.heldOut / (K * heldOutCount) : NaN,
    recallExisting: existingCount > 0 ? found.existing / (K * existingCount) : NaN,
    p50Ms: quantile(times, 0.5),
    p99Ms: quantile(times, 0.99),
  };
}

function meets(pass: Pass): boolean {
  return pass.recall >= RECALL_TARGET && pass.p99Ms <= P99_TARGET_MS;
}

/** Builds the quantization's index, sweeps ef and prints its lines; the index is dropped on return. */
function measureQuantization(
  quantization: (typeof QUANTIZATIONS)[number],
  matrix: Float32Array,
  queries: Float32Array[],
  existing: boolean[],
  exact: Exact,
): boolean {
  const beforeBuildRssMb = rssMb();
  const buildStart = performance.now();
  const bytes = buildIndex(
    matrix,
    itemCount,
    D,
    quantization,
    { connectivity: CONNECTIVITY, expansionAdd: EXPANSION_ADD },
    BUILD_THREADS,
  );
  const buildS = (performance.now() - buildStart) / 1000;
  const afterBuildRssMb = rssMb();
  // As the daemon loads a vectors artifact: the rows, and the index file it maps.
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-vectors-'));
  const file = path.join(dir, `index-${quantization}.usearch`);
  writeFileSync(file, bytes);
  const vectors = new TenantVectors();
  vectors.replaceBase(
    {
      version: 1,
      builtAt: 0,
      model: 'hashing-v1',
      externalIds: Array.from({ length: itemCount }, (_, row) => String(row)),
      hashes: new Uint32Array(itemCount),
      matrix,
      indexFiles: { [quantization]: file },
    },
    Number,
  );

  const passes: Pass[] = [];
  for (const ef of sweep)
    passes.push(searchPass(vectors, quantization, ef, matrix, queries, existing, exact));
  rmSync(dir, { recursive: true, force: true });
  const line = (pass: Pass) => ({
    ef: pass.ef,
    recallAt10: round(pass.recall, 4),
    keyRecallAt10: round(pass.keyRecall, 4),
    recallHeldOut: round(pass.recallHeldOut, 4),
    recallExisting: round(pass.recallExisting, 4),
    p50Ms: round(pass.p50Ms),
    p99Ms: round(pass.p99Ms),
  });
  for (const pass of passes) {
    console.log(
      JSON.stringify({
        case: `hnsw ${quantization} ef sweep`,
        ...line(pass),
        recallMet: pass.recall >= RECALL_TARGET,
        p99Met: pass.p99Ms <= P99_TARGET_MS,
      }),
    );
  }
  const judged = passes.find((pass) => pass.ef === defaultEf)!;
  const met = meets(judged);
  console.log(
    JSON.stringify({
      case: `hnsw ${quantization}`,
      items: itemCount,
      queries: queries.length,
      buildS: round(buildS, 2),
      buildThreads: BUILD_THREADS,
      rssBeforeBuildMb: beforeBuildRssMb,
      rssAfterBuildMb: afterBuildRssMb,
      ...line(judged),
      exactP50Ms: round(exact.p50Ms),
      exactP99Ms: round(exact.p99Ms),
      ...(quantization === 'i8'
        ? { quantizedExactRecallAt10: round(quantizedExactRecall(matrix, queries, exact), 4) }
        : {}),
      lowestEfForRecall: passes.find((pass) => pass.recall >= RECALL_TARGET)?.ef ?? null,
      lowestEfMeetingTarget: passes.find(meets)?.ef ?? null,
      target: TARGET,
      met,
    }),
  );
  return met;
}

// ---------------------------------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------------------------------

const catalog = new Catalog(new Rng(SEED, VOCABULARY_STREAM));
const texts = distinctTexts(catalog, new Rng(SEED, CATALOG_STREAM), itemCount);
const existingQueries = Math.floor(queryCount / EXISTING_EVERY);
const heldOut = distinctTexts(
  catalog,
  new Rng(SEED, QUERY_STREAM),
  queryCount - existingQueries,
  new Set(texts),
);

const embedder = new HashingEmbedder();
const matrix = new Float32Array(itemCount * D);
const embedStart = performance.now();
for (let i = 0; i < itemCount; i++) embedder.embedOne(texts[i], matrix, i * D);
const embedS = (performance.now() - embedStart) / 1000;
const textsPerS = itemCount / embedS;
let characters = 0;
for (const text of texts) characters += text.length;
const embedMet = textsPerS >= EMBED_TARGET;
console.log(
  JSON.stringify({
    case: 'hashing embedder',
    texts: itemCount,
    meanChars: round(characters / itemCount, 1),
    vocabulary: catalog.vocabulary,
    productNouns: catalog.nounCount,
    seconds: round(embedS, 2),
    textsPerS: Math.round(textsPerS),
    example: texts[0],
    target: `>= ${EMBED_TARGET}`,
    met: embedMet,
  }),
);

// Every query a vector of its own (offset 0, not shared): what usearch's native searches accept.
const pickRng = new Rng(SEED, PICK_STREAM);
const queries: Float32Array[] = [];
const existing: boolean[] = [];
let nextHeldOut = 0;
for (let q = 0; q < queryCount; q++) {
  // Every EXISTING_EVERY-th query: floor(queryCount / EXISTING_EVERY) of them, as counted above.
  const isExisting = q % EXISTING_EVERY === EXISTING_EVERY - 1;
  const query = new Float32Array(D);
  if (isExisting) {
    const row = pickRng.int(itemCount);
    query.set(matrix.subarray(row * D, (row + 1) * D));
  } else embedder.embedOne(heldOut[nextHeldOut++], query, 0);
  queries.push(query);
  existing.push(isExisting);
}

const exact = exactAnswers(matrix, queries);
checkExact(matrix, itemCount, queries, exact);
console.log(
  JSON.stringify({
    case: 'exact search',
    items: itemCount,
    queries: queryCount,
    p50Ms: round(exact.p50Ms),
    p99Ms: round(exact.p99Ms),
    checkedAgainstScan: Math.min(SCAN_CHECKS, queryCount),
  }),
);

let missed = embedMet ? 0 : 1;
for (const quantization of QUANTIZATIONS) {
  if (!measureQuantization(quantization, matrix, queries, existing, exact)) missed++;
  // The index is out of reach now: its native memory goes before the next one is built.
  await collectGarbage();
}
if (missed > 0) process.exitCode = 1;
