import { dotAt } from '../../src/linalg/vectors.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Index, MetricKind, exactSearch, type BatchMatches } from 'usearch';
import { MODEL_FORMATS, type ItemVectors } from '../../src/artifacts/formats.js';
import { openCurrent } from '../../src/artifacts/open.js';
import {
  EMBEDDING_TEMPLATE,
  QUANTIZATIONS,
  VECTOR_SEARCH_DEFAULTS,
  type EmbeddingTemplate,
  type Quantization,
} from '../../src/contract/vectors.js';
import { vectorConfigFile } from '../../src/lake/layout.js';
import { openEmbedder } from '../../src/vector/embedders.js';
import { itemText, sortedTemplates } from '../../src/vector/templates.js';
import { vectorTextHash } from '../../src/vector/text-hash.js';
import type { LakeDb } from '../lake/lake-db.js';
import type { ModelJob } from '../model-job.js';

export interface VectorsParameters {
  /** Above this many items, HNSW indexes are built; up to it, search is exact. */
  exactLimit: number;
  /** HNSW links per node. */
  connectivity: number;
  /** HNSW breadth while adding. */
  expansionAdd: number;
  /** A transformers model directory; none: the built-in hashing embedder. */
  modelDir: string | null;
  /** Nearest items listed per item, for similar-products (0: no lists). */
  neighbours: number;
}

/** Up to this many rows, the lists come from an exact search of every row against every row. */
const EXACT_LISTS = 2_000;
/** Candidates an HNSW search for a list explores; they are scored again on the full vectors. */
const LIST_CANDIDATES = 64;

/** Up to this many items a tenant's vectors are searched exactly (docs/guide.md, "Vectors and search"). */
const DEFAULT_EXACT_LIMIT = 20_000;

function exactLimitFromEnvironment(): number {
  const value = Number(process.env.NEXTREC_VECTOR_EXACT_LIMIT);
  return Number.isInteger(value) && value >= 0 ? value : DEFAULT_EXACT_LIMIT;
}

/** Texts embedded at a time. */
const BATCH = 256;

interface VectorConfig {
  templates: EmbeddingTemplate[];
  quantizations: Quantization[];
}

/** The tenant's templates and the quantizations its defaults and scenarios ask for, from the lake. */
function readVectorConfig(dataDir: string, tenantId: string): VectorConfig {
  let raw: { templates?: unknown[]; defaults?: unknown[]; scenarios?: unknown[] } = {};
  try {
    raw = JSON.parse(readFileSync(vectorConfigFile(dataDir, tenantId), 'utf8')) as typeof raw;
  } catch {
    // No configuration exported yet: the built-in template, exact search or f32.
  }
  const templates = (raw.templates ?? []).flatMap((doc) => {
    const parsed = EMBEDDING_TEMPLATE.safeParse(doc);
    return parsed.success ? [parsed.data] : [];
  });
  const wanted = new Set<Quantization>();
  const add = (value: unknown) => {
    if (QUANTIZATIONS.includes(value as Quantization)) wanted.add(value as Quantization);
  };
  const defaults = (raw.defaults?.[0] ?? {}) as { quantization?: unknown };
  add(defaults.quantization ?? VECTOR_SEARCH_DEFAULTS.quantization);
  for (const scenario of raw.scenarios ?? []) {
    const settings = (scenario as { vectorSettings?: Record<string, unknown> }).vectorSettings;
    add(settings?.quantization);
    add(settings?.quantization_type);
  }
  return { templates, quantizations: [...wanted] };
}

/** An HNSW index over the first `rows` rows, keyed by row. */
function hnswIndex(
  matrix: Float32Array,
  rows: number,
  dimensions: number,
  quantization: Quantization,
  parameters: Pick<VectorsParameters, 'connectivity' | 'expansionAdd'>,
  threads: number,
  expansionSearch = 16,
): Index {
  const index = new Index({
    metric: MetricKind.IP,
    dimensions,
    connectivity: parameters.connectivity,
    quantization: quantization as never,
    expansion_add: parameters.expansionAdd,
    expansion_search: expansionSearch,
    multi: false,
  });
  const keys = new BigUint64Array(rows);
  for (let row = 0; row < rows; row++) keys[row] = BigInt(row);
  if (rows > 0) index.add(keys, matrix.subarray(0, rows * dimensions), threads);
  return index;
}

/** An HNSW index over the rows (keyed by row), as the bytes of its file. */
export function buildIndex(
  matrix: Float32Array,
  rows: number,
  dimensions: number,
  quantization: Quantization,
  parameters: Pick<VectorsParameters, 'connectivity' | 'expansionAdd'>,
  threads: number,
): Uint8Array {
  const index = hnswIndex(matrix, rows, dimensions, quantization, parameters, threads);
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-vectors-'));
  try {
    const file = path.join(dir, 'index.usearch');
    index.save(file);
    return readFileSync(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Each row's `neighbours` nearest other rows with a positive similarity, best first: similar-products
 * reads them instead of searching (docs/guide.md, "Vectors and search"). Small sets are searched exactly; larger
 * ones through an i8 HNSW index made for the purpose, its candidates scored again on the full vectors.
 */
export function nearestLists(
  matrix: Float32Array,
  rows: number,
  dimensions: number,
  neighbours: number,
  parameters: Pick<VectorsParameters, 'connectivity' | 'expansionAdd'>,
  threads: number,
): NonNullable<ItemVectors['lists']> {
  const offsets = new Int32Array(rows + 1);
  const listRows: number[] = [];
  const listScores: number[] = [];
  if (rows > 1 && neighbours > 0) {
    const wanted = Math.min(
      rows,
      rows <= EXACT_LISTS ? neighbours + 1 : Math.max(LIST_CANDIDATES, neighbours + 1),
    );
    let matches: BatchMatches;
    const queries = matrix.subarray(0, rows * dimensions);
    if (rows <= EXACT_LISTS) {
      matches = exactSearch(queries, queries, dimensions, wanted, MetricKind.IP, threads) as BatchMatches;
    } else {
      const index = hnswIndex(matrix, rows, dimensions, 'i8', parameters, threads, wanted);
      matches = index.search(queries, wanted, threads) as BatchMatches;
    }
    const candidates: { row: number; score: number }[] = [];
    for (let row = 0; row < rows; row++) {
      candidates.length = 0;
      const found = Number(matches.counts[row]);
      for (let i = 0; i < found; i++) {
        const other = Number(matches.keys[row * wanted + i]);
        if (other === row) continue;
        const score = dotAt(matrix, row * dimensions, matrix, other * dimensions, dimensions);
        if (score > 0) candidates.push({ row: other, score });
      }
      candidates.sort((a, b) => b.score - a.score);
      for (const candidate of candidates.slice(0, neighbours)) {
        listRows.push(candidate.row);
        listScores.push(candidate.score);
      }
      offsets[row + 1] = listRows.length;
    }
  }
  return { offsets, rows: Int32Array.from(listRows), scores: Float32Array.from(listScores) };
}

/**
 * The vectors model (docs/guide.md, "Vectors and search"): every item a template applies to, embedded from its
 * text; rows of the previous version whose text is unchanged are reused rather than embedded again.
 * Above `exactLimit` items, an HNSW index per quantization the tenant uses.
 */
export const vectorsJob: ModelJob<VectorsParameters> = {
  model: 'vectors',
  defaults: {
    exactLimit: exactLimitFromEnvironment(),
    connectivity: 16,
    expansionAdd: 128,
    modelDir: process.env.NEXTREC_MODEL_DIR || null,
    neighbours: 50,
  },
  async build(lake: LakeDb, parameters, context) {
    // A lake without a location (a scratch lake) has no configuration and no previous version.
    const location = lake.location;
    const config = location
      ? readVectorConfig(location.dataDir, location.tenantId)
      : { templates: [], quantizations: [VECTOR_SEARCH_DEFAULTS.quantization] };
    const templates = sortedTemplates(new Map(config.templates.map((t) => [t.slug, t])));
    const embedder = await openEmbedder(parameters.modelDir ?? undefined);
    try {
      const dimensions = embedder.dimensions;
      const previous = new Map<string, { hash: number; vector: Float32Array }>();
      const current = location && openCurrent(location.dataDir, location.tenantId, 'vectors');
      if (current) {
        const old = MODEL_FORMATS.vectors.decode(current);
        if (old.model === embedder.model && old.dimensions === dimensions) {
          old.items.forEach((id, row) =>
            previous.set(id, {
              hash: old.hashes[row],
              vector: old.matrix.subarray(row * dimensions, (row + 1) * dimensions),
            }),
          );
        }
      }
      const reader = await lake.db.runAndReadAll(
        'SELECT external_id, category, attributes FROM items ORDER BY external_id',
      );
      const items: string[] = [];
      const hashes: number[] = [];
      const vectors: (Float32Array | undefined)[] = [];
      const toEmbed: { row: number; text: string }[] = [];
      for (const [externalId, category, attributes] of reader.getRows()) {
        const text = itemText(templates, {
          category: category === null ? null : String(category),
          attributes:
            attributes === null ? undefined : (JSON.parse(String(attributes)) as Record<string, unknown>),
        });
        if (text === undefined) continue;
        const hash = vectorTextHash(embedder.model, text);
        const known = previous.get(String(externalId));
        const row = items.length;
        items.push(String(externalId));
        hashes.push(hash);
        if (known && known.hash === hash) vectors.push(known.vector);
        else {
          vectors.push(undefined);
          toEmbed.push({ row, text });
        }
      }
      for (let start = 0; start < toEmbed.length; start += BATCH) {
        const batch = toEmbed.slice(start, start + BATCH);
        const embedded = await embedder.embed(batch.map((entry) => entry.text));
        batch.forEach((entry, i) => {
          vectors[entry.row] = embedded.slice(i * dimensions, (i + 1) * dimensions);
        });
      }
      // Texts with nothing to embed came back as zeros: such items are left out.
      const kept = vectors.flatMap((vector, row) =>
        vector && vector.some((value) => value !== 0) ? [row] : [],
      );
      const matrix = new Float32Array(kept.length * dimensions);
      kept.forEach((row, i) => matrix.set(vectors[row]!, i * dimensions));
      const model: ItemVectors = {
        model: embedder.model,
        dimensions,
        items: kept.map((row) => items[row]),
        hashes: Uint32Array.from(kept.map((row) => hashes[row])),
        matrix,
        indexes: {},
      };
      if (kept.length > parameters.exactLimit) {
        for (const quantization of config.quantizations) {
          model.indexes[quantization] = buildIndex(
            matrix,
            kept.length,
            dimensions,
            quantization,
            parameters,
            context.threads,
          );
        }
      }
      model.lists = nearestLists(
        matrix,
        kept.length,
        dimensions,
        parameters.neighbours,
        parameters,
        context.threads,
      );
      const { files, shape } = MODEL_FORMATS.vectors.encode(model);
      return {
        files,
        shape,
        parameters: {
          ...parameters,
          model: embedder.model,
          quantizations: Object.keys(model.indexes),
          embedded: toEmbed.length,
        },
        source: { interactions: 0, users: 0, items: kept.length },
      };
    } finally {
      await embedder.close();
    }
  },
};
