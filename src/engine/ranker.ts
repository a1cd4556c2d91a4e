import type { HeapFigures } from '../state/memory.js';
import type { StateChangeLog } from '../state/state-changes.js';
import type { TenantState } from '../state/tenant-state.js';
import { recommendResolved, startRequest } from './pipeline.js';
import type { ResolvedProjection } from './projection.js';
import type { RecommendationRequest } from './request.js';
import { renderList } from './response-body.js';
import { renderSearch, searchFacets } from './search.js';
import type { TurnQueue } from './turn-queue.js';

/**
 * A request's list as JSON (see `renderList`), with what ranking knows of it: the summary that the
 * record of answers and the pages keep, which the thread that answers then need not read from the text.
 */
export interface RankedAnswer {
  body: string;
  /** The listed items' dense ids, in order. */
  items: number[];
  algorithm: string;
  scenario: string;
  /** The experiment's slug; '' for none. */
  experiment: string;
}

/** The request's answer, or why the request has none. */
export type RankingOutcome = RankedAnswer | Error;

/** Ranks a tenant's request, and calls `done` with the outcome, now or later. */
export type Rank = (
  tenant: TenantState,
  request: RecommendationRequest,
  projection: ResolvedProjection,
  now: number,
  done: (outcome: RankingOutcome) => void,
) => void;

/** Ranks recommendation requests: in the thread that asks (LocalRanker) or in another (WorkerRanker). */
export interface Ranker {
  /** Where the serving state records its changes, when ranking reads a replica of it. */
  readonly changes?: StateChangeLog;
  readonly rank: Rank;
  /** The heap of the thread that ranks, when that is a thread of its own (docs/memory.md). */
  threadHeap?(): Promise<HeapFigures | undefined>;
  /** Has the thread that ranks, when it is a thread of its own, collect its garbage (docs/memory.md). */
  collectGarbage?(): void;
  /**
   * Resolves once the thread that ranks, when it is a thread of its own, has done all it was asked so
   * far: the state's changes applied, the requests ranked, a collection run.
   */
  settled?(): Promise<void>;
  close(): Promise<void>;
}

/** The request's list, ranked and rendered, or the error (of the request, mostly) that stopped it. */
export function rankingOutcome(
  tenant: TenantState,
  request: RecommendationRequest,
  projection: ResolvedProjection,
  now: number,
): RankingOutcome {
  try {
    const context = startRequest(tenant, request, now);
    const list = recommendResolved(context);
    const items: number[] = [];
    // Facets count under the whole filter, as the list's first round applied it.
    const body = request.search
      ? renderSearch(
          tenant,
          list,
          searchFacets(context, context.config.filter),
          request.search,
          projection,
          items,
        )
      : renderList(tenant.catalog, list, projection, items);
    return {
      body,
      items,
      algorithm: list.algorithm,
      scenario: list.scenario ?? '',
      experiment: list.experiment?.slug ?? '',
    };
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Ranks in this thread: at once, or, given a TurnQueue, at the end of the turn together with the turn's
 * other requests.
 */
export class LocalRanker implements Ranker {
  constructor(private readonly queue?: TurnQueue) {}

  readonly rank: Rank = (tenant, request, projection, now, done) => {
    if (!this.queue) return done(rankingOutcome(tenant, request, projection, now));
    this.queue.defer(() => done(rankingOutcome(tenant, request, projection, now)));
  };

  async close(): Promise<void> {}
}
