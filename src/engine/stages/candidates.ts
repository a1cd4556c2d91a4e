import { requestPools, type CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';
import { IdMarks } from '../id-marks.js';
import { popularityRanking } from '../popularity.js';

/** Fill candidates score below the algorithm's own: at most this share of its lowest score. */
const FILL_CEILING = 0.5;

/** One request at a time runs the (synchronous) pipeline, so the sources share one "seen" set. */
const seen = new IdMarks();

/**
 * The candidates of a request in the order stages 3-6 take them: the algorithm's own first, then the
 * catalog in geo-aware popularity order, so filters can always reach further when they reject much.
 * `restart` replays the same sequence (filter auto-relax evaluates it again with fewer clauses).
 */
export class CandidateSource {
  private readonly own: CandidatePool;
  private position = 0;
  private fillPosition = 0;
  /** Whether the fill began since the last restart, and so `seen` holds the seeds and own candidates. */
  private fillStarted = false;
  private readonly fillBase: number;
  private readonly batch = requestPools.take(256);

  constructor(private readonly context: PipelineContext) {
    this.own = context.config.algorithm.candidates(context);
    let lowest = Infinity;
    for (let i = 0; i < this.own.length; i++) lowest = Math.min(lowest, this.own.scores[i]);
    this.fillBase = this.own.length > 0 ? lowest * FILL_CEILING : 1;
    this.restart();
  }

  restart(): void {
    this.position = 0;
    this.fillPosition = 0;
    this.fillStarted = false;
  }

  /**
   * Up to `size` more candidates, or an empty pool when the sequence is exhausted. The pool is reused by
   * the next call: take what it holds before asking again.
   */
  next(size: number): CandidatePool {
    const batch = this.batch;
    batch.length = 0;
    const { own } = this;
    // The algorithm's candidates are distinct and never seeds (Algorithm.candidates): taken as they are.
    own.rankPrefix(this.position + size);
    const ownEnd = Math.min(own.length, this.position + size);
    for (; this.position < ownEnd; this.position++)
      batch.push(own.ids[this.position], own.scores[this.position]);
    if (batch.length === size || !this.context.config.algorithm.popularityFill) return batch;
    if (!this.fillStarted) {
      // Only now, and only for the fill: marking every candidate would cost a random access each.
      this.fillStarted = true;
      seen.begin(this.context.tenant.catalog.size);
      for (const seed of this.context.seeds) seen.mark(seed);
      for (let i = 0; i < own.length; i++) seen.mark(own.ids[i]);
    }
    const ranking = popularityRanking(this.context.tenant, this.context.geo, this.context.now);
    while (batch.length < size && this.fillPosition < ranking.ids.length) {
      const id = ranking.ids[this.fillPosition];
      if (seen.mark(id)) batch.push(id, this.fillBase * ranking.scores[this.fillPosition], true);
      this.fillPosition++;
    }
    return batch;
  }
}

/** Stage 2. */
export function candidates(context: PipelineContext): CandidateSource {
  return new CandidateSource(context);
}
