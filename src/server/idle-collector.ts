import { getHeapStatistics } from 'node:v8';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { releasingCollection } from '../state/memory.js';

/**
 * V8 collects garbage when a thread allocates: once a load ends (a backfill through the ingestion
 * routes, a catalog sync), nothing allocates, and the heap keeps the size the load grew it to with the
 * load's garbage in it, hundreds of MB at a million events (docs/memory.md). The collector runs a
 * full collection once the daemon received no request for a while after its heap grew.
 *
 * What a collection cannot free because something still referenced it (an old model version a thread
 * had not let go of yet, a query's result still being read) becomes garbage later, without the heap
 * growing again. So while the heap stays well above the lowest size a collection ever left, the
 * collector tries once more at a quiet moment `retryMs` after its last collection; a retry that frees
 * little means what is held is live, and its size becomes the base.
 */
export interface IdleCollectorOptions {
  /** How often it looks. */
  checkMs: number;
  /** How long no request must have arrived. */
  quietMs: number;
  /** How much the heap must have grown since the last collection. */
  growthBytes: number;
  /** How long after a collection to retry while the heap stays `growthBytes` above its lowest. */
  retryMs: number;
}

export const IDLE_COLLECTOR: IdleCollectorOptions = Object.freeze({
  checkMs: 2_000,
  quietMs: 3_000,
  growthBytes: 32 * 1024 * 1024,
  retryMs: 30_000,
});

/**
 * What this thread holds, in bytes: its heap (what is resident of it) and the memory outside the heap that
 * its objects own (the buffers of request bodies and of the store's query results), which only a
 * collection gives back. A load through the API grew the latter by 300 MB while the heap grew by 17 MB
 * (bench/memory, 2,000,000 interactions): judged by the heap alone, no collection ran after it.
 */
export function heapSize(): number {
  const stats = getHeapStatistics();
  return stats.total_physical_size + stats.external_memory;
}

export class IdleCollector {
  private lastRequest = -Infinity;
  private inFlight = 0;
  /** The heap's size after the last collection: none yet, so the first quiet moment collects what the
   * start-up load left. */
  private sizeAfter = 0;
  /** The lowest size a collection left (or V8 shrank the heap to). */
  private floor = Infinity;
  private lastCollection = -Infinity;
  private timer: NodeJS.Timeout | undefined;
  /** Collections run so far. */
  collections = 0;

  private readonly collect: () => void;
  private readonly size: () => number;
  private readonly options: IdleCollectorOptions;
  private readonly now: () => number;
  private readonly alsoCollect?: () => void;

  constructor(
    parts: {
      collect?: () => void;
      size?: () => number;
      options?: IdleCollectorOptions;
      now?: () => number;
      /**
       * What else to give back at the same moment: the ranking thread's garbage (its replica grew with
       * the load), the store's cached pages.
       */
      alsoCollect?: () => void;
    } = {},
  ) {
    this.collect = parts.collect ?? releasingCollection();
    this.size = parts.size ?? heapSize;
    this.options = parts.options ?? IDLE_COLLECTOR;
    this.now = parts.now ?? (() => performance.now());
    this.alsoCollect = parts.alsoCollect;
  }

  /** A request arrived. */
  requested(): void {
    this.lastRequest = this.now();
    this.inFlight++;
  }

  /**
   * A request was answered (or its connection closed). Until then the daemon is not idle, however long
   * the request takes: a feed sync asked for over HTTP runs for seconds.
   */
  answered(): void {
    this.lastRequest = this.now();
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** Requests arrived and not answered yet. */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Collects now if the daemon is quiet and the heap grew (or a retry is due); whether it did. */
  check(): boolean {
    const now = this.now();
    if (this.inFlight > 0 || now - this.lastRequest < this.options.quietMs) return false;
    const { growthBytes, retryMs } = this.options;
    const size = this.size();
    // A heap V8 shrank by itself is the new base.
    this.sizeAfter = Math.min(this.sizeAfter, size);
    this.floor = Math.min(this.floor, size);
    const grew = size - this.sizeAfter >= growthBytes;
    const retry = !grew && size - this.floor >= growthBytes && now - this.lastCollection >= retryMs;
    if (!grew && !retry) return false;
    this.collect();
    this.alsoCollect?.();
    this.collections++;
    this.lastCollection = now;
    this.sizeAfter = this.size();
    this.floor =
      retry && size - this.sizeAfter < growthBytes ? this.sizeAfter : Math.min(this.floor, this.sizeAfter);
    return true;
  }

  start(): void {
    this.timer = setInterval(() => this.check(), this.options.checkMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * Has `collector` follow `server`'s requests: each is answered once, when its response closes or else its
 * connection does (a pipelined request still queued when its connection closes gets no response, nor
 * its 'close').
 */
export function followRequests(server: Server, collector: IdleCollector): void {
  const open = new WeakMap<Socket, Set<ServerResponse>>();
  const responsesOf = (socket: Socket): Set<ServerResponse> => {
    const known = open.get(socket);
    if (known) return known;
    const responses = new Set<ServerResponse>();
    open.set(socket, responses);
    socket.once('close', () => {
      for (let n = responses.size; n > 0; n--) collector.answered();
      responses.clear();
    });
    return responses;
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    collector.requested();
    const responses = responsesOf(request.socket);
    responses.add(response);
    response.once('close', () => {
      if (responses.delete(response)) collector.answered();
    });
  });
}
