import { Worker } from 'node:worker_threads';
import { ApiError, type ErrorCode } from '../contract/errors.js';
import type { HeapFigures } from '../state/memory.js';
import { StateChangeLog, type StateChange } from '../state/state-changes.js';
import type { TenantState } from '../state/tenant-state.js';
import type { ResolvedProjection } from './projection.js';
import { TurnQueue } from './turn-queue.js';
import { LocalRanker, type Rank, type RankedAnswer, type Ranker, type RankingOutcome } from './ranker.js';
import type { RecommendationRequest } from './request.js';

/**
 * Requests go to the ranking thread at the end of the turn, or as soon as this many are waiting, and its
 * answers come back this many at a time: with small messages neither thread waits long for the other's
 * whole batch, while the cost of a message is still shared by several requests. Measured against one
 * message per turn each way: 6 to 10 % more user-to-item requests per second under load.
 */
const REQUESTS_PER_MESSAGE = 8;
export const ANSWERS_PER_MESSAGE = 4;
/**
 * Requests the ranking thread has not ranked yet beyond which the event-loop thread ranks new ones
 * itself, at the end of its turn: under load the ranking thread is the one that waits longest, while the
 * event-loop thread has time to spare (docs/benchmarks.md).
 */
export const ASSIST_BACKLOG = 16;

/**
 * What the ranking thread is started with: a counter, in shared memory, of the requests it has ranked
 * (an Int32Array's one element, wrapping), which it adds to as it ranks each.
 */
export interface RankingThreadData {
  ranked: SharedArrayBuffer;
}

export interface RankingRequest {
  tenantId: string;
  request: RecommendationRequest;
  now: number;
}

/** What the ranking thread is sent: the state's changes since the last message, then requests. */
export interface RankingBatch {
  changes: StateChange[];
  requests: RankingRequest[];
  /** Asks the thread for its heap figures, which it sends after the batch's answers. */
  heap?: boolean;
  /** Asks the thread for a full garbage collection after the batch (docs/memory.md). */
  collect?: boolean;
  /** Asks the thread to say, last, that it has done the batch (see `SettledReport`). */
  settled?: boolean;
}

/** Why a request has no list: an ApiError's parts, or another error's message and stack. */
export interface RankingFailure {
  code?: ErrorCode;
  message: string;
  details?: unknown[];
  stack?: string;
}

/**
 * Answers to the oldest requests not yet answered, in their order. Bodies travel as text: encoding them in
 * the ranking thread and copying the bytes back cost it more than the event-loop thread pays to encode
 * them (user-to-item under load: 12,500 to 12,800 against 13,500 to 14,200 requests per second). Their
 * items travel beside them by dense id, so that the event-loop thread need not read them from the text.
 */
export interface RankedBatch {
  /** null where the request failed. */
  answers: (RankedAnswer | null)[];
  /** null where the request has its answer. */
  failures: (RankingFailure | null)[];
}

/** The thread's heap, as a batch that asked for it wanted. */
export interface HeapReport {
  heap: HeapFigures;
}

/** The thread has done everything sent to it up to the batch that asked for this. */
export interface SettledReport {
  settled: true;
}

interface Waiting {
  tenant: TenantState;
  request: RecommendationRequest;
  projection: ResolvedProjection;
  now: number;
  done: (outcome: RankingOutcome) => void;
}

const WORKER_SCRIPT = new URL('./ranking-worker.js', import.meta.url);

/**
 * The ranking thread's young generation, in MB (docs/memory.md, "Giving memory back, and steady
 * traffic"): under bench/soak's mix V8 grew it to 48 MB after a burst of requests and kept it, while the
 * thread's live objects stayed near 13 MB. At 12 MB (4 MB semi-spaces) it collects about once a second,
 * as it did in the first minutes of that mix before V8 grew it.
 */
export const RANKING_YOUNG_GENERATION_MB = 12;

function errorOf(failure: RankingFailure): Error {
  if (failure.code !== undefined) return new ApiError(failure.code, failure.message, failure.details);
  return Object.assign(new Error(failure.message), { stack: failure.stack });
}

/**
 * Ranks in a worker thread that keeps a replica of the serving state: every change of the state is
 * recorded in `changes` and sent ahead of the requests of the same turn, and the thread applies them in
 * order before ranking, so a request sees every write acknowledged before it. The event-loop thread is
 * left with HTTP, validation, the cache and the writes; on a machine with a core to spare, ranking no
 * longer waits for them, nor they for ranking.
 *
 * Should the thread fail, this thread's own state (which the replica only copies) ranks from then on,
 * the requests in flight included.
 */
export class WorkerRanker implements Ranker {
  readonly changes: StateChangeLog;
  private readonly worker: Worker;
  /** Requests of this turn, not yet sent. */
  private queued: Waiting[] = [];
  /** Requests sent, oldest first; the thread answers them in order. */
  private sent: Waiting[] = [];
  /** Requests sent in all, and ranked by the thread in all (RankingThreadData), both wrapping at 2³¹. */
  private sentCount = 0;
  private readonly rankedCount = new Int32Array(new SharedArrayBuffer(4));
  private scheduled = false;
  private closing = false;
  private fallback?: LocalRanker;
  /** Ranks in this thread the requests that come while the ranking thread is backed up. */
  private readonly assist = new LocalRanker(new TurnQueue());
  private failure?: Error;
  private failureListener?: (error: Error) => void;
  /** Callers waiting for the thread's heap figures. */
  private heapWaiters: ((heap: HeapFigures | undefined) => void)[] = [];
  /** Callers waiting for the thread to settle, in the order they asked. */
  private settledWaiters: (() => void)[] = [];

  /** @param script the thread's module (tests start the compiled one) */
  constructor(script: URL = WORKER_SCRIPT) {
    this.changes = new StateChangeLog({ pending: () => this.schedule(), full: () => this.flush() });
    this.worker = new Worker(script, {
      workerData: { ranked: this.rankedCount.buffer as SharedArrayBuffer } satisfies RankingThreadData,
      resourceLimits: { maxYoungGenerationSizeMb: RANKING_YOUNG_GENERATION_MB },
    });
    this.worker.on('message', (message: RankedBatch | HeapReport | SettledReport) => {
      if ('heap' in message) this.heapReported(message.heap);
      else if ('settled' in message) this.settledWaiters.shift()?.();
      else this.answered(message);
    });
    // An answer that can't be read would leave the answers after it to the wrong requests.
    this.worker.on('messageerror', (error) => this.failOver(error));
    this.worker.on('error', (error) => this.failOver(error));
    this.worker.on('exit', (code) => this.failOver(new Error(`ranking thread exited with code ${code}`)));
  }

  readonly rank: Rank = (tenant, request, projection, now, done) => {
    if (this.fallback) return this.fallback.rank(tenant, request, projection, now, done);
    // The replica reads the counts this thread keeps, and expires nothing of them itself.
    tenant.recentCounts.advance(now);
    tenant.geoCounts.advance(now);
    // This thread's state is the original, with every change the replica has and more.
    if (this.unranked() + this.queued.length >= ASSIST_BACKLOG)
      return this.assist.rank(tenant, request, projection, now, done);
    this.queued.push({ tenant, request, projection, now, done });
    if (this.queued.length >= REQUESTS_PER_MESSAGE) this.flush();
    else this.schedule();
  };

  /**
   * Requests sent that the thread has not ranked yet. Not those whose answers merely wait for this thread
   * to read them: counting those, a busy event loop took its own backlog of answers for the thread's and
   * ranked ever more itself, while the ranking thread idled (a third busy under bench/serve's load).
   */
  private unranked(): number {
    return Math.min(this.sent.length, (this.sentCount - Atomics.load(this.rankedCount, 0)) | 0);
  }

  /** `listener` is told once, should the thread fail (at once, if it has). */
  whenFailed(listener: (error: Error) => void): void {
    this.failureListener = listener;
    if (this.failure) listener(this.failure);
  }

  /** The ranking thread's heap; undefined once ranking went back to this thread. */
  threadHeap(): Promise<HeapFigures | undefined> {
    if (this.fallback) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.heapWaiters.push(resolve);
      if (this.heapWaiters.length === 1) this.post({ changes: [], requests: [], heap: true });
    });
  }

  /** Has the thread collect its garbage (the daemon is idle: see server/idle-collector.ts). */
  collectGarbage(): void {
    if (!this.fallback) this.post({ changes: [], requests: [], collect: true });
  }

  /**
   * Resolves once the thread has applied every change recorded so far and done everything asked of it
   * before (at once, once ranking went back to this thread).
   */
  settled(): Promise<void> {
    // The changes not sent yet go first.
    this.flush();
    if (this.fallback) return Promise.resolve();
    return new Promise((resolve) => {
      this.settledWaiters.push(resolve);
      if (!this.post({ changes: [], requests: [], settled: true })) this.settle();
    });
  }

  private settle(): void {
    for (const resolve of this.settledWaiters.splice(0)) resolve();
  }

  /** Sends a batch to the thread; false, and ranking back in this thread, if it could not be sent. */
  private post(batch: RankingBatch): boolean {
    try {
      this.worker.postMessage(batch);
      return true;
    } catch (error) {
      this.failOver(error instanceof Error ? error : new Error(String(error)));
      return false;
    }
  }

  private heapReported(heap: HeapFigures | undefined): void {
    const waiters = this.heapWaiters;
    this.heapWaiters = [];
    for (const resolve of waiters) resolve(heap);
  }

  /** Ends the thread; requests still waiting for it, and any that come later, are ranked here. */
  async close(): Promise<void> {
    this.closing = true;
    await this.worker.terminate();
    this.settle();
    this.rankHere();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flushScheduled);
  }

  private readonly flushScheduled = (): void => {
    this.scheduled = false;
    this.flush();
  };

  private flush(): void {
    const changes = this.changes.take();
    if (this.fallback || (changes.length === 0 && this.queued.length === 0)) return;
    const requests = this.queued;
    const batch: RankingBatch = {
      changes,
      requests: requests.map(({ tenant, request, now }) => ({ tenantId: tenant.tenantId, request, now })),
    };
    // Not sent: the requests, still queued, are ranked in this thread.
    if (!this.post(batch)) return;
    this.queued = [];
    for (const request of requests) this.sent.push(request);
    this.sentCount = (this.sentCount + requests.length) | 0;
  }

  private answered({ answers, failures }: RankedBatch): void {
    const answered = this.sent.splice(0, answers.length);
    for (let i = 0; i < answered.length; i++) {
      const failure = failures[i];
      answered[i].done(failure ? errorOf(failure) : answers[i]!);
    }
  }

  private failOver(error: Error): void {
    if (this.fallback || this.closing) return;
    this.failure = error;
    this.failureListener?.(error);
    void this.worker.terminate();
    this.heapReported(undefined);
    this.settle();
    this.rankHere();
  }

  /**
   * Ranks the waiting requests, and those to come, in this thread. Not at once: this may run inside a
   * write's commit (a full change log flushes there), whose changes must all be applied first.
   */
  private rankHere(): void {
    // From now on `flush` drops the changes recorded: they have no reader.
    const fallback = (this.fallback ??= new LocalRanker());
    const waiting = [...this.sent.splice(0), ...this.queued.splice(0)];
    setImmediate(() => {
      for (const { tenant, request, projection, now, done } of waiting) {
        fallback.rank(tenant, request, projection, now, done);
      }
    });
  }
}
