/**
 * The ranking thread of WorkerRanker: a replica of the serving state, kept equal to the original by its
 * changes, ranks the requests it is sent.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ApiError } from '../contract/errors.js';
import { fullCollection, heapFigures, releasingCollection, type TenantFootprint } from '../state/memory.js';
import { applyStateChange } from '../state/apply-state-change.js';
import type { StateChange } from '../state/state-changes.js';
import { ServingState } from '../state/tenant-state.js';
import { resolveProjection } from './projection.js';
import { rankingOutcome, type RankingOutcome } from './ranker.js';
import {
  ANSWERS_PER_MESSAGE,
  type RankedBatch,
  type RankingBatch,
  type RankingFailure,
  type HeapReport,
  type RankingRequest,
  type RankingThreadData,
  type SettledReport,
} from './worker-ranker.js';

const state = new ServingState(undefined, true);
/** Requests ranked (RankingThreadData); absent when started without it. */
const rankedCount = (workerData as RankingThreadData | undefined)?.ranked;
const ranked = rankedCount ? new Int32Array(rankedCount) : undefined;

function failureOf(error: Error): RankingFailure {
  if (error instanceof ApiError) return { code: error.code, message: error.message, details: error.details };
  return { message: error.message, stack: error.stack };
}

function outcomeOf({ tenantId, request, now }: RankingRequest): RankingOutcome {
  const tenant = state.get(tenantId);
  // Projection errors were answered before the request was sent here.
  const outcome = tenant
    ? rankingOutcome(tenant, request, resolveProjection(request.projection), now)
    : new Error(`no tenant '${tenantId}' to rank for`);
  if (ranked) Atomics.add(ranked, 0, 1);
  return outcome;
}

/** What the replica's catalogs keep besides their items, by tenant. */
function cached(): Record<string, TenantFootprint['cached']> {
  return Object.fromEntries(state.ids().map((id) => [id, state.get(id)!.catalog.cached]));
}

function send(outcomes: RankingOutcome[]): void {
  const batch: RankedBatch = {
    answers: outcomes.map((outcome) => (outcome instanceof Error ? null : outcome)),
    failures: outcomes.map((outcome) => (outcome instanceof Error ? failureOf(outcome) : null)),
  };
  parentPort!.postMessage(batch);
}

// A change that does not apply means the replica no longer equals the original: the error ends the
// thread, and the original ranks from then on.
const collect = releasingCollection();

/**
 * Shared memory this thread let go of (docs/memory.md, "Giving memory back, and steady traffic"): a model
 * version, or counts or histories copied to grow, replaces the one before it, whose shared arrays are
 * freed only once every thread's handles on them are collected. This thread allocates little while it
 * ranks, so V8 ran no full collection here for minutes (none in 8 minutes of bench/soak after the first
 * 25 s), and it kept every version it had served. So once the arrays replaced since its last full
 * collection reach this many bytes, the thread runs one after answering the requests at hand: about 10 ms
 * of this thread, every minute or so under a small tenant's co-occurrence rebuilt every 2 s.
 */
const RELEASE_AFTER_BYTES = 16 * 1024 * 1024;
const collectNow = fullCollection();
let replacedBytes = 0;

/** The shared arrays a change brings (and so, about, those it replaces), or undefined for none. */
function sharedArrays(change: StateChange): object | undefined {
  switch (change.kind) {
    case 'neighbours':
    case 'factors':
      return change.model;
    case 'counts':
      return change.counts;
    case 'histories':
      return change.histories;
    case 'vector-base':
      return change.base;
    default:
      return undefined;
  }
}

function sharedBytes(change: StateChange): number {
  let bytes = 0;
  for (const value of Object.values(sharedArrays(change) ?? {}))
    if (ArrayBuffer.isView(value)) bytes += value.byteLength;
  return bytes;
}

parentPort!.on('message', ({ changes, requests, heap, collect: collecting, settled }: RankingBatch) => {
  for (const change of changes) {
    applyStateChange(state, change);
    replacedBytes += sharedBytes(change);
  }
  for (let start = 0; start < requests.length; start += ANSWERS_PER_MESSAGE) {
    send(requests.slice(start, start + ANSWERS_PER_MESSAGE).map(outcomeOf));
  }
  if (heap)
    parentPort!.postMessage({
      heap: Object.assign(heapFigures(), { cached: cached() }),
    } satisfies HeapReport);
  if (collecting || replacedBytes >= RELEASE_AFTER_BYTES) {
    if (collecting) collect();
    else collectNow();
    replacedBytes = 0;
  }
  if (settled) parentPort!.postMessage({ settled: true } satisfies SettledReport);
});
