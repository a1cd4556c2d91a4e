import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8 collects garbage when a thread allocates: once a load ends (a backfill through the ingestion
 * routes, a catalog sync), nothing allocates, and the heap keeps the size the load grew it to with the
 * load's garbage in it, hundreds of MB at a million events (README, "Memory"). The collector runs a
 * full collection once the daemon received no request for a while after its heap grew.
 */
export interface IdleCollectorOptions {
  /** How often it looks. */
  checkMs: number;
  /** How long no request must have arrived. */
  quietMs: number;
  /** How much the heap must have grown since the last collection. */
  growthBytes: number;
}

export const IDLE_COLLECTOR: IdleCollectorOptions = Object.freeze({
  checkMs: 2_000,
  quietMs: 3_000,
  growthBytes: 32 * 1024 * 1024,
});

/**
 * V8's full collection, callable without starting Node with --expose-gc: the flag set at run time
 * exposes `gc` to contexts created after it.
 */
export function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('V8 did not expose its garbage collection');
  return gc as () => void;
}

/** The size of this thread's heap, in bytes (what is resident of it). */
export function heapSize(): number {
  return getHeapStatistics().total_physical_size;
}

export class IdleCollector {
  private lastRequest = -Infinity;
  private sizeAfter: number;
  private timer: NodeJS.Timeout | undefined;
  /** Collections run so far. */
  collections = 0;

  constructor(
    private readonly collect: () => void = fullCollection(),
    private readonly size: () => number = heapSize,
    private readonly options: IdleCollectorOptions = IDLE_COLLECTOR,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.sizeAfter = size();
  }

  /** A request arrived. */
  requested(): void {
    this.lastRequest = this.now();
  }

  /** Collects now if the daemon is quiet and the heap grew; whether it did. */
  check(): boolean {
    if (this.now() - this.lastRequest < this.options.quietMs) return false;
    const size = this.size();
    // A heap V8 shrank by itself is the new base.
    this.sizeAfter = Math.min(this.sizeAfter, size);
    if (size - this.sizeAfter < this.options.growthBytes) return false;
    this.collect();
    this.collections++;
    this.sizeAfter = this.size();
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
