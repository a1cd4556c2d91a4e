/** When a waiting task may run, as the last call for its key that gave limits set it. */
export interface QuietLimits {
  /** The task runs at the latest this long after the first call since it last ran (default: the timers'). */
  maxWaitMs?: number;
  /** The task never runs before this time (epoch ms; default: no such bound). */
  notBefore?: number;
}

/** A task waiting for its key to be quiet. */
interface Waiting {
  /** When the first and the last call since the task last ran came (epoch ms). */
  first: number;
  last: number;
  maxWaitMs: number;
  notBefore: number;
  timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms). */
  firesAt: number;
}

/**
 * Runs a task per key once calls for the key pause: `quietMs` after the last call, and at the latest
 * `maxWaitMs` after the first one since the task last ran. What follows writes (the lake export, model
 * builds) thus runs once after a burst of them, rather than a fixed time after its start, on part of it,
 * and again and again while it lasts (docs/batch-models.md). A call while the task waits costs no
 * timer: the timer, when it fires early, waits the rest.
 */
export class QuietTimers {
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly quietMs: number,
    private readonly maxWaitMs: number,
    private readonly run: (key: string) => void,
  ) {}

  /**
   * A call for `key`: its task runs once calls pause for `quietMs`, within the limits this call sets, or
   * without them, those the task waits under already (a first call's: the defaults).
   */
  touch(key: string, limits?: QuietLimits): void {
    const now = Date.now();
    const maxWaitMs = limits?.maxWaitMs ?? this.maxWaitMs;
    const notBefore = limits?.notBefore ?? 0;
    const waiting = this.waiting.get(key);
    if (waiting) {
      waiting.last = now;
      if (!limits) return;
      waiting.maxWaitMs = maxWaitMs;
      waiting.notBefore = notBefore;
      // Limits that make the task due sooner than its timer fires take effect now.
      if (this.dueAt(waiting) < waiting.firesAt) {
        clearTimeout(waiting.timer);
        this.arm(key, waiting, now);
      }
      return;
    }
    const started: Waiting = { first: now, last: now, maxWaitMs, notBefore, timer: undefined, firesAt: 0 };
    this.waiting.set(key, started);
    this.arm(key, started, now);
  }

  /** Whether a task waits for `key`. */
  has(key: string): boolean {
    return this.waiting.has(key);
  }

  /** The keys whose tasks wait. */
  keys(): string[] {
    return [...this.waiting.keys()];
  }

  /** Forgets the task waiting for `key`, if any, without running it. */
  forget(key: string): void {
    clearTimeout(this.waiting.get(key)?.timer);
    this.waiting.delete(key);
  }

  /** Forgets every waiting task without running it. */
  clear(): void {
    for (const waiting of this.waiting.values()) clearTimeout(waiting.timer);
    this.waiting.clear();
  }

  private dueAt(waiting: Waiting): number {
    const { first, last, maxWaitMs, notBefore } = waiting;
    return Math.max(notBefore, Math.min(last + this.quietMs, first + maxWaitMs));
  }

  private arm(key: string, waiting: Waiting, now: number): void {
    const delay = Math.max(0, this.dueAt(waiting) - now);
    waiting.firesAt = now + delay;
    waiting.timer = setTimeout(() => this.fire(key, waiting), delay);
    waiting.timer.unref();
  }

  /** The timer fired: the task runs if it is due, or else waits the rest. */
  private fire(key: string, waiting: Waiting): void {
    if (this.waiting.get(key) !== waiting) return;
    const now = Date.now();
    if (now < this.dueAt(waiting)) {
      this.arm(key, waiting, now);
      return;
    }
    this.waiting.delete(key);
    this.run(key);
  }
}
