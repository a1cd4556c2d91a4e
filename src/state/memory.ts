import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ItemNeighbours } from './item-neighbours.js';
import type { ServingState, TenantState } from './tenant-state.js';

/** One thread's V8 heap, in bytes. */
export interface HeapFigures {
  used: number;
  total: number;
  /** Of `total`, what is resident. */
  physical: number;
  /** Memory of the thread's ArrayBuffers and native objects outside the heap (shared memory included). */
  external: number;
  /** By space (old, new, code, large objects, ...): used, and resident. */
  spaces: Record<string, { used: number; physical: number }>;
  /**
   * The ranking thread's: what its catalogs keep besides the items, by tenant (docs/memory.md). The
   * tenants' own `cached` figures are the event-loop thread's, which renders nothing while it has one.
   */
  cached?: Record<string, TenantFootprint['cached']>;
}

export function heapFigures(): HeapFigures {
  const heap = getHeapStatistics();
  const spaces = Object.fromEntries(
    getHeapSpaceStatistics().map((space) => [
      space.space_name,
      { used: space.space_used_size, physical: space.physical_space_size },
    ]),
  );
  return {
    used: heap.used_heap_size,
    total: heap.total_heap_size,
    physical: heap.total_physical_size,
    external: heap.external_memory,
    spaces,
  };
}

/**
 * V8's full collection, callable without starting Node with --expose-gc: the flag set at run time
 * exposes `gc` to contexts created after it.
 */
export function fullCollection(): () => void {
  return (exposedCollection ??= exposeCollection());
}

/**
 * A full collection that also gives back the pages of the heap it emptied, for an idle thread. V8
 * releases those only at its next collection: after one, a heap whose live objects fell from 164 to 10 MB
 * still took 137 MB; a second (quick, since little is left to mark) brought it to 54 MB.
 */
export function releasingCollection(): () => void {
  const collect = fullCollection();
  return () => {
    collect();
    collect();
  };
}

/**
 * V8's settings for serving (docs/memory.md), set once before the daemon starts its threads.
 *
 * No pretenuring: the allocation sites of every request (its headers, its response) were found to
 * outlive young collections in the first seconds of traffic after a load, when requests queue, and V8
 * then allocated their objects in the old generation for good: at 1,000 user-to-item requests a second
 * (bench/latency) the event-loop thread ran a mark-compact every 4-5 s, with young collections of up to
 * 21 ms.
 *
 * One helper thread for concurrent marking, in the threads started after this (the ranking thread, the
 * loading thread; V8 reads it as it sets a thread's heap up, so the event loop's keeps its own): by
 * default V8 marks with up to four, which on two cores took both from the event loop and the ranking
 * thread for 15 to 30 ms at each of the ranking thread's major collections.
 */
const ONE_MARKING_HELPER = '--concurrent-marking-max-worker-num=1';
const SERVING_V8_FLAGS: readonly string[] = Object.freeze([
  '--no-allocation-site-pretenuring',
  ONE_MARKING_HELPER,
]);

export function tuneV8ForServing(): void {
  for (const flag of SERVING_V8_FLAGS) setFlagsFromString(flag);
}

/**
 * The V8 flags `nextrec` is started with (the first line of bin/run.js, `npm start`; docs/memory.md):
 * the event-loop thread's heap is set up before any code runs, so only there can its marking helpers be
 * limited as SERVING_V8_FLAGS limits the other threads'. With V8's four, on two cores one of its major
 * collections left the event loop and the ranking thread without a CPU for about 70 ms.
 */
export const PROCESS_V8_FLAGS: readonly string[] = Object.freeze([ONE_MARKING_HELPER]);

/** PROCESS_V8_FLAGS this process was not started with. */
export function missingProcessFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return PROCESS_V8_FLAGS.filter((flag) => !execArgv.includes(flag));
}

/** The thread's full collection, once exposed. */
let exposedCollection: (() => void) | undefined;

function exposeCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('V8 did not expose its garbage collection');
  return gc as () => void;
}

/**
 * What a tenant's serving state holds (docs/memory.md): counts, and the bytes of its typed arrays.
 * `perThread` is held by the event-loop thread and again by the ranking thread's replica; `shared` (the
 * loaded models) once, in memory both threads read. Objects (item attributes, ids) are not counted here:
 * they are in the threads' heaps.
 */
export interface TenantFootprint {
  items: number;
  /** Dense item ids: the catalog's items and the items only events named. */
  itemIds: number;
  identities: number;
  historyEvents: number;
  /** Events in the 30-day popularity window and in the 7-day geo window. */
  counterEvents: { recent: number; geo: number };
  eventIds: number;
  /** Items rendered under the last projection and their characters, attribute columns built. */
  cached: { rendered: number; renderedCharacters: number; attributeColumns: number };
  perThread: { catalogColumns: number; vectorDelta: number };
  /** The loaded models: when each was built, and from how many interactions (vectors: items). */
  models: Record<'cooccurrence' | 'ease' | 'factors' | 'vectors', { builtAt: number; source: number }>;
  /**
   * Held once: the histories and windowed counters (shared memory the event-loop thread writes and the
   * ranking thread reads; the counters' event heaps are the event-loop thread's alone), and the models.
   */
  shared: {
    histories: number;
    counters: number;
    cooccurrence: number;
    ease: number;
    factors: number;
    vectors: number;
  };
}

function neighbourBytes(model: ItemNeighbours): number {
  const compact = model.compact;
  return (
    model.offsets.byteLength +
    model.neighbours.byteLength +
    model.weights.byteLength +
    (compact
      ? compact.local.byteLength +
        compact.members.byteLength +
        compact.localOf.byteLength +
        compact.weights.byteLength
      : 0)
  );
}

function modelOf(model: { builtAt: number; interactionCount: number }): { builtAt: number; source: number } {
  return { builtAt: model.builtAt, source: model.interactionCount };
}

export function tenantFootprint(tenant: TenantState): TenantFootprint {
  const { catalog, histories, recentCounts, geoCounts, factors, vectors } = tenant;
  const vectorBytes = vectors.bytes;
  return {
    items: catalog.itemCount,
    itemIds: catalog.size,
    identities: histories.size,
    historyEvents: histories.events,
    counterEvents: { recent: recentCounts.events, geo: geoCounts.events },
    eventIds: tenant.interactionEventIds.size + tenant.impressionEventIds.size,
    cached: catalog.cached,
    perThread: {
      catalogColumns: catalog.columnBytes,
      vectorDelta: vectorBytes.own,
    },
    models: {
      cooccurrence: modelOf(tenant.neighbourModel('cooccurrence')),
      ease: modelOf(tenant.neighbourModel('ease')),
      factors: factors ? modelOf(factors) : { builtAt: 0, source: 0 },
      vectors: { builtAt: vectors.builtAt, source: vectors.baseRows },
    },
    shared: {
      histories: histories.bytes,
      counters: recentCounts.bytes + geoCounts.bytes,
      cooccurrence: neighbourBytes(tenant.neighbourModel('cooccurrence')),
      ease: neighbourBytes(tenant.neighbourModel('ease')),
      factors: factors
        ? factors.itemFactors.byteLength + factors.known.byteLength + factors.itemGram.byteLength
        : 0,
      vectors: vectorBytes.base,
    },
  };
}

export function stateFootprint(state: ServingState): Record<string, TenantFootprint> {
  return Object.fromEntries(state.ids().map((id) => [id, tenantFootprint(state.get(id)!)]));
}
