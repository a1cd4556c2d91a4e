import { setImmediate as nextTurn } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { EmbeddingTemplate } from '../contract/vectors.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import type { Embedder } from '../vector/embedder.js';
import { itemText, sortedTemplates } from '../vector/templates.js';
import { vectorTextHash } from '../vector/text-hash.js';

/** Items embedded at a time: large enough for a model's batching, small enough to keep turns short. */
const BATCH = 128;
/** Search texts whose vectors are kept: a repeated search (a cached answer) is not embedded again. */
const QUERY_VECTORS = 10_000;

/** An item as the embeddings helper receives it. */
export interface IndexedItem {
  externalId: string;
  category?: string | null;
  attributes?: Record<string, unknown>;
}

export interface IndexerEvents {
  error(details: object, message: string): void;
  /** A change's items got their vectors, or some were left for the vectors build. */
  embedded(tenant: TenantState): void;
}

/**
 * Embeds items in the background (docs/guide.md, "Vectors and search"): upserts and template changes name the
 * items to look at, and the indexer renders each one's text, embeds those whose text changed, in
 * batches, and sets their vectors in the serving state. Ingestion never waits for it; an item's vector
 * follows its upsert within seconds.
 */
export class VectorIndexer {
  /** Changes to look at, by tenant, oldest first: each is decided on as a whole (see embedChanged). */
  private readonly pending = new Map<string, number[][]>();
  /** The change being looked at: its tenant, and how many of its items are not settled yet. */
  private current: { tenantId: string; left: number } | undefined;
  private running: Promise<void> | null = null;
  private stopped = false;
  private waiters: (() => void)[] = [];
  private readonly queryVectors = new LRUCache<string, Float32Array>({ max: QUERY_VECTORS });

  constructor(
    readonly embedder: Embedder,
    private readonly state: ServingState,
    private events: IndexerEvents = { error: () => undefined, embedded: () => undefined },
  ) {}

  /** Where errors are logged (the daemon's logger, once it has one). */
  logTo(log: Pick<IndexerEvents, 'error'>): void {
    this.events = { ...this.events, error: (details, message) => log.error(details, message) };
  }

  /** Items were upserted: their vectors follow. */
  itemsChanged(tenant: TenantState, externalIds: readonly string[]): void {
    const items = externalIds.map((externalId) => tenant.catalog.idOf(externalId)).filter((id) => id >= 0);
    this.enqueue(tenant.tenantId, items);
  }

  /**
   * A new vectors base serves: the items that waited for it (the delta was full) are looked at again,
   * and those whose text the base does not have are embedded now, as room allows.
   */
  baseReplaced(tenant: TenantState): void {
    const { awaitingBuild } = tenant.vectors;
    const items = [...awaitingBuild];
    awaitingBuild.clear();
    this.enqueue(tenant.tenantId, items);
  }

  /** Every item of the tenant is looked at again (its templates changed, or the daemon started). */
  tenantChanged(tenant: TenantState): void {
    this.enqueue(
      tenant.tenantId,
      Array.from({ length: tenant.catalog.size }, (_, id) => id),
    );
  }

  /** Resolves once nothing is left to embed. */
  idle(): Promise<void> {
    if (!this.running && this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Embeds items as sent to the embeddings helper (`POST /index`) and sets their vectors now; returns how
   * many got one. An item not in the catalog yet gets a vector that serves once it is upserted with the
   * same text (with another text, it is embedded again).
   */
  async indexItems(tenant: TenantState, items: readonly IndexedItem[]): Promise<number> {
    const sorted = sortedTemplates(tenant.config.embeddingTemplates);
    const model = this.embedder.model;
    const named: { externalId: string; text: string }[] = [];
    for (const item of items) {
      const text = itemText(sorted, { category: item.category ?? null, attributes: item.attributes });
      if (text !== undefined) named.push({ externalId: item.externalId, text });
    }
    // Items not in the catalog yet get theirs, when left out, once they are upserted.
    const { vectors, catalog } = tenant;
    if (this.leaveForBuild(tenant, named, (entry) => catalog.idOf(entry.externalId)))
      this.events.embedded(tenant);
    if (named.length === 0) return 0;
    const embedded = await this.embedder.embed(named.map((entry) => entry.text));
    const d = this.embedder.dimensions;
    const externalIds: string[] = [];
    const hashes: number[] = [];
    const matrix = new Float32Array(named.length * d);
    named.forEach((entry, i) => {
      const row = embedded.subarray(i * d, i * d + d);
      if (row.every((value) => value === 0)) return;
      matrix.set(row, externalIds.length * d);
      externalIds.push(entry.externalId);
      hashes.push(vectorTextHash(model, entry.text));
    });
    if (externalIds.length === 0) return 0;
    for (const externalId of externalIds) {
      const id = catalog.idOf(externalId);
      if (id >= 0) vectors.awaitingBuild.delete(id);
    }
    tenant.setVectors(externalIds, matrix.slice(0, externalIds.length * d), Uint32Array.from(hashes));
    this.events.embedded(tenant);
    return externalIds.length;
  }

  /** The vector of a query text. */
  async embedQuery(text: string): Promise<Float32Array> {
    let vector = this.queryVectors.get(text);
    if (vector === undefined) {
      vector = await this.embedder.embed([text]);
      this.queryVectors.set(text, vector);
    }
    return vector;
  }

  /**
   * Items waiting for a vector, by tenant: to be looked at or embedded (an item named by two changes
   * counts twice), or left for the vectors build.
   */
  backlog(): Map<string, number> {
    const backlog = new Map<string, number>();
    const add = (tenantId: string, count: number) => {
      if (count > 0) backlog.set(tenantId, (backlog.get(tenantId) ?? 0) + count);
    };
    for (const [tenantId, changes] of this.pending) {
      for (const change of changes) add(tenantId, change.length);
    }
    if (this.current) add(this.current.tenantId, this.current.left);
    for (const tenantId of this.state.ids())
      add(tenantId, this.state.get(tenantId)!.vectors.awaitingBuild.size);
    return backlog;
  }

  /** Stops embedding (what is left is looked at again at the next start) and closes the embedder. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    await this.embedder.close();
  }

  private enqueue(tenantId: string, items: readonly number[]): void {
    if (this.stopped || items.length === 0) return;
    let changes = this.pending.get(tenantId);
    if (!changes) this.pending.set(tenantId, (changes = []));
    // Small changes that come one after another are looked at together, to embed them in one batch.
    const last = changes.at(-1);
    if (last && last.length + items.length <= BATCH) last.push(...items);
    else changes.push([...items]);
    this.kick();
  }

  private kick(): void {
    this.running ??= this.drain().finally(() => {
      this.running = null;
      if (this.pending.size > 0 && !this.stopped) this.kick();
      else for (const resolve of this.waiters.splice(0)) resolve();
    });
  }

  private async drain(): Promise<void> {
    while (!this.stopped && this.pending.size > 0) {
      const [tenantId, changes] = this.pending.entries().next().value!;
      const change = changes.shift()!;
      if (changes.length === 0) this.pending.delete(tenantId);
      const tenant = this.state.get(tenantId);
      if (!tenant) continue;
      const progress = (this.current = { tenantId, left: change.length });
      try {
        if (await this.embedChanged(tenant, change, progress)) this.events.embedded(tenant);
      } catch (error) {
        this.events.error({ err: error, tenantId }, 'embedding items failed');
      } finally {
        this.current = undefined;
      }
    }
  }

  /**
   * Looks at a change's items, a batch per turn, and embeds those whose text changed (docs/guide.md, "Vectors and search"). When they are more than the delta has room for, as in a bulk load, none is embedded
   * here: all of them wait for the vectors build, which embeds each once, rather than some of them twice
   * (here, then again in the build, which reuses only its previous version's vectors). When embedding
   * fails, the change's items wait for the build too. Whether any vector was set, or an item was left
   * for the vectors build.
   */
  private async embedChanged(
    tenant: TenantState,
    ids: readonly number[],
    progress: { left: number },
  ): Promise<boolean> {
    const { catalog, vectors } = tenant;
    try {
      const sorted = sortedTemplates(tenant.config.embeddingTemplates);
      const changed: number[] = [];
      const removed: number[] = [];
      for (let start = 0; start < ids.length; start += BATCH) {
        if (start > 0) await nextTurn();
        if (this.stopped) return false;
        const batch = ids.slice(start, start + BATCH);
        for (const id of batch) {
          vectors.awaitingBuild.delete(id);
          const text = this.textOf(tenant, sorted, id);
          if (text === undefined) {
            if (vectors.hashOf(id) !== undefined) removed.push(id);
          } else if (vectors.hashOf(id) !== text.hash) changed.push(id);
        }
        progress.left = ids.length - start - batch.length + changed.length;
      }
      if (removed.length > 0) tenant.removeVectors(removed);
      if (changed.length > vectors.deltaRoom) {
        for (const id of changed) vectors.awaitingBuild.add(id);
        return true;
      }
      let any = false;
      for (let start = 0; start < changed.length && !this.stopped; start += BATCH) {
        any = (await this.embedBatch(tenant, sorted, changed.slice(start, start + BATCH))) || any;
        progress.left = Math.max(0, changed.length - start - BATCH);
        // A turn of its own per batch: the built-in embedder computes in this thread.
        await nextTurn();
      }
      return any;
    } catch (error) {
      this.events.error({ err: error, tenantId: tenant.tenantId }, 'embedding items failed');
      // Each item of the change in the catalog waits for the build; those it has already are skipped.
      for (const id of ids) if (catalog.inCatalog[id]) vectors.awaitingBuild.add(id);
      return true;
    }
  }

  /** The item's text to embed and its hash; undefined for a placeholder or an item no template fits. */
  private textOf(
    tenant: TenantState,
    sorted: readonly EmbeddingTemplate[],
    id: number,
  ): { text: string; hash: number } | undefined {
    const { catalog } = tenant;
    if (!catalog.inCatalog[id]) return undefined;
    const text = itemText(sorted, { category: catalog.categories[id], attributes: catalog.attributesOf(id) });
    return text === undefined ? undefined : { text, hash: vectorTextHash(this.embedder.model, text) };
  }

  /**
   * Keeps in `entries` only as many as the delta has room for; those left out that are in the catalog
   * (`idOf` ≥ 0) wait for the vectors build. Whether any was left out.
   */
  private leaveForBuild<T>(tenant: TenantState, entries: T[], idOf: (entry: T) => number): boolean {
    const room = tenant.vectors.deltaRoom;
    if (entries.length <= room) return false;
    for (const entry of entries.splice(room)) {
      const id = idOf(entry);
      if (id >= 0) tenant.vectors.awaitingBuild.add(id);
    }
    return true;
  }

  /**
   * Embeds a batch of items whose text changed, their texts as they are now, as far as the delta has room.
   * Whether any vector was set, or an item was left for the vectors build.
   */
  private async embedBatch(
    tenant: TenantState,
    sorted: readonly EmbeddingTemplate[],
    batch: number[],
  ): Promise<boolean> {
    const { catalog, vectors } = tenant;
    // Room taken meanwhile (POST /index) leaves the rest for the build; the `embedded` event asks for it.
    const left = this.leaveForBuild(tenant, batch, (id) => id);
    const items: number[] = [];
    const texts: string[] = [];
    const hashes: number[] = [];
    for (const id of batch) {
      const text = this.textOf(tenant, sorted, id);
      if (text === undefined) continue;
      items.push(id);
      texts.push(text.text);
      hashes.push(text.hash);
    }
    if (items.length === 0) return left;
    const embedded = await this.embedder.embed(texts);
    const d = this.embedder.dimensions;
    // A text with nothing to embed comes back as zeros: such an item has no vector.
    const kept: number[] = [];
    const keptHashes: number[] = [];
    const empty: number[] = [];
    let rows = 0;
    const matrix = new Float32Array(items.length * d);
    for (let i = 0; i < items.length; i++) {
      // Deleted while it was embedded (docs/guide.md, "Deleting items"): its dense id names nothing now.
      if (!catalog.inCatalog[items[i]]) continue;
      const row = embedded.subarray(i * d, i * d + d);
      if (row.every((value) => value === 0)) {
        if (vectors.hashOf(items[i]) !== undefined) empty.push(items[i]);
        continue;
      }
      matrix.set(row, rows++ * d);
      kept.push(items[i]);
      keptHashes.push(hashes[i]);
    }
    if (kept.length > 0) {
      const externalIds = kept.map((id) => catalog.externalIds[id]);
      tenant.setVectors(externalIds, matrix.slice(0, rows * d), Uint32Array.from(keptHashes));
    }
    if (empty.length > 0) tenant.removeVectors(empty);
    return kept.length > 0 || left;
  }
}
