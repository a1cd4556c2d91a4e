import { closeSync, openSync, readSync } from 'node:fs';
import { dotAt } from '../linalg/vectors.js';
import { Index, MetricKind, exactSearch, type Matches } from 'usearch';
import type { Quantization } from '../contract/vectors.js';
import { ensureCapacity } from '../linalg/growable.js';
import { VECTOR_DIMENSIONS } from './embedder.js';

/**
 * A built set of item vectors, as the vectors artifact holds it and a message between threads carries it:
 * plain data. Rows are L2-normalised, so the inner product is the cosine similarity.
 */
export interface VectorBase {
  /** The artifact's version (0: none). */
  version: number;
  /** When the artifact was built (epoch ms; 0: none). */
  builtAt: number;
  /** The embedder the vectors come from. */
  model: string;
  /** Row → the item's external id. */
  externalIds: string[];
  /** Row → the hash of the text the row was embedded from (see `textHash`). */
  hashes: Uint32Array;
  /** rows × VECTOR_DIMENSIONS; in shared memory when threads share it. Empty with `matrixFile`. */
  matrix: Float32Array;
  /**
   * Where the rows are, when they are not in `matrix`: a base searched through HNSW reads the few rows a
   * request needs (its seeds', the candidates it rescores) from the artifact's file, rather than holding
   * rows × 1.5 KB in memory (docs/memory.md). Each thread opens it for itself.
   */
  matrixFile?: string;
  /** HNSW index files over the rows, keyed by row, per quantization; none: searched exactly. */
  indexFiles: Partial<Record<Quantization, string>>;
  /** Each row's nearest rows, best first (see ItemVectors in the artifact formats); absent: none built. */
  lists?: { offsets: Int32Array; rows: Int32Array; scores: Float32Array };
}

function emptyVectorBase(): VectorBase {
  return {
    version: 0,
    builtAt: 0,
    model: '',
    externalIds: [],
    hashes: new Uint32Array(0),
    matrix: new Float32Array(0),
    indexFiles: {},
  };
}

export interface VectorSearchOptions {
  /** HNSW search breadth: at least this many candidates are explored (ignored by exact search). */
  ef: number;
  /** Matches scoring below this are left out, and so are those not similar at all (0 or less). */
  threshold: number;
  /** Which of the base's HNSW indexes to search; the first there is when it has not this one. */
  quantization: Quantization;
  /** Whether an item may be returned (available, of the wanted categories, not a seed). */
  accept: (id: number) => boolean;
}

/** Matches, best first. */
export interface VectorMatches {
  ids: number[];
  scores: number[];
}

const D = VECTOR_DIMENSIONS;

/**
 * The most rows a tenant's delta takes (docs/guide.md, "Vectors and search"): 30 MB in each thread that holds
 * it. Items that find it full wait for the vectors build, so a bulk load (a first feed sync of 100,000
 * items) does not hold 1.5 KB per item twice over until that build.
 */
export const DELTA_ROWS_LIMIT = 20_000;
/**
 * The room the delta keeps for one batch: CONTRACT.md has batches of up to 10,000 items show in vector
 * results within 60 s. A delta with less room left makes the vectors build due at once.
 */
export const DELTA_BATCH_ROOM = 10_000;

/** The best `want` of matches found in parts, best first. */
function ranked(found: { id: number; score: number }[], want: number): VectorMatches {
  found.sort((a, b) => b.score - a.score);
  const ids: number[] = [];
  const scores: number[] = [];
  for (let i = 0; i < found.length && ids.length < want; i++) {
    ids.push(found[i].id);
    scores.push(found[i].score);
  }
  return { ids, scores };
}

/**
 * A tenant's item vectors, by dense item id (docs/guide.md, "Vectors and search"): the base, built by the
 * vectors job and loaded from its artifact (searched with its HNSW index when it has one, else exactly),
 * and the delta, the items embedded by the daemon since, searched exactly. An item has at most one live
 * row; a row it no longer owns (its text changed, it left the index) is skipped by searches until the next
 * build leaves it out.
 */
export class TenantVectors {
  private base: VectorBase = emptyVectorBase();
  /** Base row → dense item id. */
  private baseItem = new Int32Array(0);
  /** The base matrix copied out of shared memory, for exact search (see exactBase). */
  private ownBase: Float32Array | undefined;
  /** The open `matrixFile` of the base, when its rows are read from there. */
  private rowsFile: number | undefined;
  /** Per quantization, the base's HNSW index; opened on first use. */
  private readonly indexes = new Map<Quantization, Index>();
  private delta = new Float32Array(0);
  private deltaItem = new Int32Array(0);
  private deltaHashes = new Uint32Array(0);
  private deltaRows = 0;
  /** Item id → its live row: base row + 1, −(delta row + 1), or 0 for none. */
  private itemRow = new Int32Array(0);
  private liveCount = 0;
  /** Bumps on every change: cached answers and remembered searches are checked against it. */
  version = 0;
  /**
   * Items with no vector of their text that wait for the next vectors build, as the delta was full when
   * their turn came (DELTA_ROWS_LIMIT). Kept by the thread that embeds; a replica's stays empty.
   */
  readonly awaitingBuild = new Set<number>();

  /** Items with a live vector. */
  get size(): number {
    return this.liveCount;
  }

  /** Rows embedded since the base: how far the next build is behind. */
  get deltaSize(): number {
    return this.deltaRows;
  }

  /** Rows the delta takes before it is full (see DELTA_ROWS_LIMIT). */
  get deltaRoom(): number {
    return Math.max(0, DELTA_ROWS_LIMIT - this.deltaRows);
  }

  get builtAt(): number {
    return this.base.builtAt;
  }

  get baseRows(): number {
    return this.base.externalIds.length;
  }

  get model(): string {
    return this.base.model;
  }

  /**
   * Bytes of its arrays: the base's (matrix, text hashes, lists; shared with the ranking thread when it
   * has one) and this thread's own (the delta, the item numbering, a copy of the base for exact search).
   */
  get bytes(): { base: number; own: number } {
    const { matrix, hashes, lists } = this.base;
    // A matrix left in its file is in the page cache, not here.
    const listBytes = lists ? lists.offsets.byteLength + lists.rows.byteLength + lists.scores.byteLength : 0;
    return {
      base: matrix.byteLength + hashes.byteLength + listBytes,
      own:
        this.delta.byteLength +
        this.deltaItem.byteLength +
        this.deltaHashes.byteLength +
        this.itemRow.byteLength +
        this.baseItem.byteLength +
        (this.ownBase?.byteLength ?? 0),
    };
  }

  /** Whether searches of the base use an HNSW index. */
  get approximate(): boolean {
    return Object.keys(this.base.indexFiles).length > 0;
  }

  /**
   * Makes `base` the built part. Delta rows survive unless the base has the same text for their item;
   * `idOf` gives an external id its dense id (the catalog's, creating one when needed).
   */
  replaceBase(base: VectorBase, idOf: (externalId: string) => number): void {
    // First, so that a file that cannot be opened leaves everything as it was.
    const rowsFile = base.matrixFile === undefined ? undefined : openSync(base.matrixFile, 'r');
    if (this.rowsFile !== undefined) closeSync(this.rowsFile);
    this.rowsFile = rowsFile;
    this.indexes.clear();
    this.ownBase = undefined;
    const keptItems: number[] = [];
    const keptRows: number[] = [];
    for (let row = 0; row < this.deltaRows; row++) {
      const item = this.deltaItem[row];
      if (this.itemRow[item] === -(row + 1)) {
        keptItems.push(item);
        keptRows.push(row);
      }
    }
    const oldDelta = this.delta;
    const oldHashes = this.deltaHashes;
    this.base = base;
    this.itemRow.fill(0);
    this.liveCount = 0;
    this.baseItem = new Int32Array(base.externalIds.length);
    base.externalIds.forEach((externalId, row) => {
      const item = idOf(externalId);
      this.baseItem[row] = item;
      this.grow(item + 1);
      if (this.itemRow[item] === 0) this.liveCount++;
      this.itemRow[item] = row + 1;
    });
    // Rows whose text the base has the same go; the delta is sized for those that stay, not for all.
    const staying = keptRows.flatMap((row, i) => {
      const baseRow = this.itemRow[keptItems[i]];
      return baseRow > 0 && base.hashes[baseRow - 1] === oldHashes[row] ? [] : [i];
    });
    const room = Math.max(staying.length, 16);
    this.delta = new Float32Array(room * D);
    this.deltaItem = new Int32Array(room);
    this.deltaHashes = new Uint32Array(room);
    this.deltaRows = 0;
    for (const i of staying) {
      const row = keptRows[i];
      this.append(keptItems[i], oldDelta.subarray(row * D, row * D + D), oldHashes[row]);
    }
    this.version++;
  }

  /** The text hash of an item's live vector, or undefined when it has none. */
  hashOf(item: number): number | undefined {
    const row = item < this.itemRow.length ? this.itemRow[item] : 0;
    if (row > 0) return this.base.hashes[row - 1];
    if (row < 0) return this.deltaHashes[-row - 1];
    return undefined;
  }

  /** The item's vector (a view: copy it to keep it), or undefined when it has none. */
  vectorOf(item: number): Float32Array | undefined {
    const row = item < this.itemRow.length ? this.itemRow[item] : 0;
    if (row > 0) return this.baseRow(row - 1);
    if (row < 0) return this.delta.subarray((-row - 1) * D, -row * D);
    return undefined;
  }

  /** A row of the base: a view of the matrix, or read from the file into `into` (a new array by default). */
  private baseRow(row: number, into?: Float32Array): Float32Array {
    if (this.rowsFile === undefined) return this.base.matrix.subarray(row * D, row * D + D);
    const vector = into ?? new Float32Array(D);
    const read = readSync(this.rowsFile, vector, 0, D * 4, row * D * 4);
    if (read !== D * 4) throw new Error(`row ${row} of ${this.base.matrixFile} is cut short`);
    return vector;
  }

  /** Sets the vectors of items (rows of `vectors`), embedded from texts with the given hashes. */
  set(items: ArrayLike<number>, vectors: Float32Array, hashes: ArrayLike<number>): void {
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      this.grow(item + 1);
      if (this.itemRow[item] === 0) this.liveCount++;
      this.append(item, vectors.subarray(i * D, i * D + D), hashes[i]);
    }
    this.version++;
  }

  /** Takes items out of vector search (their text no longer matches a template). */
  remove(items: ArrayLike<number>): void {
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (item < this.itemRow.length && this.itemRow[item] !== 0) {
        this.itemRow[item] = 0;
        this.liveCount--;
      }
    }
    this.version++;
  }

  /**
   * The `want` items nearest an item that `accept` takes, best first; undefined when the item has no
   * vector. An item of the base reads its list (built with the base) and searches only the delta; any
   * other item is searched for. Lists stand for the default search: `ef` and `quantization` do not apply
   * to them; the threshold and `accept` do. When a list yields fewer than `enough` (its items are refused,
   * or it is short), the item is searched for after all.
   */
  nearestTo(
    item: number,
    want: number,
    options: VectorSearchOptions,
    enough = want,
  ): VectorMatches | undefined {
    const vector = this.vectorOf(item);
    if (!vector) return undefined;
    const lists = this.base.lists;
    const row = this.itemRow[item] - 1;
    if (!lists || row < 0) return this.search(vector, want, options);
    const found: { id: number; score: number }[] = [];
    for (let k = lists.offsets[row]; k < lists.offsets[row + 1] && found.length < want; k++) {
      const score = lists.scores[k];
      if (score < options.threshold) break;
      const other = this.baseItem[lists.rows[k]];
      // A row whose item moved to the delta (its text changed) or left the index is skipped.
      if (this.itemRow[other] === lists.rows[k] + 1 && options.accept(other))
        found.push({ id: other, score });
    }
    this.searchDelta(found, vector.slice(0, D), want, options);
    if (found.length < enough) return this.search(vector, want, options);
    return ranked(found, want);
  }

  /** The `want` best matches of `query` (a unit vector) that `accept` takes, best first. */
  search(query: Float32Array, want: number, options: VectorSearchOptions): VectorMatches {
    const found: { id: number; score: number }[] = [];
    if (want <= 0 || this.liveCount === 0) return { ids: [], scores: [] };
    // The native searches take neither shared memory nor a view into a larger buffer: a copy of its own.
    const own = query.slice(0, D);
    const baseRows = this.base.externalIds.length;
    if (baseRows > 0) {
      const chosen = this.index(options.quantization);
      const scratch = new Float32Array(D);
      this.collect(
        found,
        want,
        options,
        baseRows,
        (k) =>
          chosen
            ? chosen.index.search(own, k, 1)
            : (exactSearch(this.exactBase(), own, D, k, MetricKind.IP, 1) as Matches),
        (row) => (this.itemRow[this.baseItem[row]] === row + 1 ? this.baseItem[row] : -1),
        chosen !== undefined,
        chosen && chosen.quantization !== 'f32'
          ? (row) =>
              this.rowsFile === undefined
                ? dotAt(this.base.matrix, row * D, own, 0, D)
                : dotAt(this.baseRow(row, scratch), 0, own, 0, D)
          : undefined,
      );
    }
    this.searchDelta(found, own, want, options);
    return ranked(found, want);
  }

  /** Adds the delta's best matches of `query` (a vector of its own, see search) to `found`. */
  private searchDelta(
    found: { id: number; score: number }[],
    query: Float32Array,
    want: number,
    options: VectorSearchOptions,
  ): void {
    if (this.deltaRows === 0) return;
    const rows = this.deltaRows;
    const matrix = this.delta.subarray(0, rows * D);
    this.collect(
      found,
      want,
      options,
      rows,
      (k) => exactSearch(matrix, query, D, k, MetricKind.IP, 1) as Matches,
      (row) => (this.itemRow[this.deltaItem[row]] === -(row + 1) ? this.deltaItem[row] : -1),
      false,
    );
  }

  /**
   * Searches one part (base or delta) for `want` accepted matches: asking for more at each round, since
   * rows no longer live and items `accept` refuses take places among the nearest. `rescore`, given for a
   * quantized index, scores its candidates again on the full-precision rows, which recovers most of what
   * quantization loses: the index only has to put the true nearest among its `ef` candidates.
   */
  private collect(
    found: { id: number; score: number }[],
    want: number,
    options: VectorSearchOptions,
    rows: number,
    search: (k: number) => Matches,
    itemOfRow: (row: number) => number,
    approximate: boolean,
    rescore?: (row: number) => number,
  ): void {
    // HNSW explores max(ef, k) candidates: asking for ef of them sets the breadth per request.
    let k = Math.min(rows, Math.max(want, approximate ? options.ef : want));
    for (;;) {
      const matches = search(k);
      const count = matches.keys.length;
      const candidates: { row: number; score: number }[] = [];
      for (let i = 0; i < count; i++) {
        const row = Number(matches.keys[i]);
        candidates.push({ row, score: rescore ? rescore(row) : 1 - matches.distances[i] });
      }
      if (rescore) candidates.sort((a, b) => b.score - a.score);
      const taken: { id: number; score: number }[] = [];
      let below = false;
      for (const { row, score } of candidates) {
        // Nearest first: once one is below the threshold (or not similar at all), so are the rest.
        if (score < options.threshold || score <= 0) {
          below = true;
          break;
        }
        const id = itemOfRow(row);
        if (id >= 0 && options.accept(id)) taken.push({ id, score });
      }
      if (taken.length >= want || below || k >= rows || count < k) {
        found.push(...taken.slice(0, want));
        return;
      }
      k = Math.min(rows, k * 4);
    }
  }

  /**
   * The base rows for exact search, in memory of this thread's own: the native search does not read
   * shared memory. Only a base without HNSW indexes is searched exactly, and such a base is small.
   */
  private exactBase(): Float32Array {
    // Only a base with HNSW indexes leaves its rows in their file, and such a base is never searched exactly.
    if (this.rowsFile !== undefined) throw new Error('a base read from its file has no exact search');
    const matrix = this.base.matrix;
    if (!(matrix.buffer instanceof SharedArrayBuffer)) return matrix;
    return (this.ownBase ??= new Float32Array(matrix));
  }

  /** The HNSW index of the quantization asked for, else the first the base has; none: exact search. */
  private index(wanted: Quantization): { index: Index; quantization: Quantization } | undefined {
    const files = this.base.indexFiles;
    const quantization = files[wanted] ? wanted : (Object.keys(files)[0] as Quantization | undefined);
    if (!quantization) return undefined;
    let index = this.indexes.get(quantization);
    if (!index) {
      index = new Index({
        metric: MetricKind.IP,
        dimensions: D,
        quantization: quantization as never,
        connectivity: 0,
        expansion_add: 0,
        // The least breadth: each search sets its own by the number of candidates it asks for.
        expansion_search: 1,
        multi: false,
      });
      // Mapped, not read: the threads that search it share the file's pages.
      index.view(files[quantization]!);
      this.indexes.set(quantization, index);
    }
    return { index, quantization };
  }

  private append(item: number, vector: Float32Array, hash: number): void {
    const row = this.deltaRows++;
    this.delta = ensureCapacity(this.delta, this.deltaRows * D, Float32Array, DELTA_ROWS_LIMIT * D);
    this.deltaItem = ensureCapacity(this.deltaItem, this.deltaRows, Int32Array, DELTA_ROWS_LIMIT);
    this.deltaHashes = ensureCapacity(this.deltaHashes, this.deltaRows, Uint32Array, DELTA_ROWS_LIMIT);
    this.delta.set(vector, row * D);
    this.deltaItem[row] = item;
    this.deltaHashes[row] = hash;
    this.itemRow[item] = -(row + 1);
  }

  private grow(needed: number): void {
    this.itemRow = ensureCapacity(this.itemRow, needed, Int32Array);
  }
}
