/** Ranking metrics at a cut-off, binary relevance (docs/batch-models.md, "Evaluation"). */
export interface UserMetrics {
  ndcg: number;
  recall: number;
  hit: number;
  mrr: number;
}

/**
 * One user's metrics: `ranked` is the list shown (first `k` count), `relevant` the held-out items.
 * NDCG divides by the ideal DCG of min(|relevant|, k) hits; Recall by |relevant|.
 */
export function userMetrics(
  ranked: readonly string[],
  relevant: ReadonlySet<string>,
  k: number,
): UserMetrics {
  let dcg = 0;
  let hits = 0;
  let firstHit = 0;
  const shown = Math.min(k, ranked.length);
  for (let position = 0; position < shown; position++) {
    if (!relevant.has(ranked[position])) continue;
    dcg += 1 / Math.log2(position + 2);
    hits++;
    if (firstHit === 0) firstHit = position + 1;
  }
  let ideal = 0;
  for (let position = 0; position < Math.min(relevant.size, k); position++)
    ideal += 1 / Math.log2(position + 2);
  return {
    ndcg: ideal > 0 ? dcg / ideal : 0,
    recall: relevant.size > 0 ? hits / relevant.size : 0,
    hit: hits > 0 ? 1 : 0,
    mrr: firstHit > 0 ? 1 / firstHit : 0,
  };
}

/** Averages of user metrics, plus catalog coverage: distinct items shown over the catalog's size. */
export class MetricsSum {
  private users = 0;
  private readonly sums: UserMetrics = { ndcg: 0, recall: 0, hit: 0, mrr: 0 };
  private readonly shown = new Set<string>();

  add(ranked: readonly string[], relevant: ReadonlySet<string>, k: number): UserMetrics {
    const metrics = userMetrics(ranked, relevant, k);
    this.users++;
    this.sums.ndcg += metrics.ndcg;
    this.sums.recall += metrics.recall;
    this.sums.hit += metrics.hit;
    this.sums.mrr += metrics.mrr;
    for (const item of ranked.slice(0, k)) this.shown.add(item);
    return metrics;
  }

  get count(): number {
    return this.users;
  }

  averages(catalogSize: number): UserMetrics & { coverage: number; users: number } {
    const n = Math.max(this.users, 1);
    return {
      ndcg: this.sums.ndcg / n,
      recall: this.sums.recall / n,
      hit: this.sums.hit / n,
      mrr: this.sums.mrr / n,
      coverage: catalogSize > 0 ? this.shown.size / catalogSize : 0,
      users: this.users,
    };
  }
}
