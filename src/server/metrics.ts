import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the metrics read when they are scraped (docs/configuration.md, "Health and metrics"). */
export interface MetricSources {
  /**
   * Records of bounded writes, and writes of any kind, queued or being committed; the records limit;
   * interactions in the log not yet moved into the store.
   */
  writeQueue(): { records: number; writes: number; limit: number; logRows: number };
  /** Answers of the recommendation result cache, since the start. */
  resultCache(): { hits: number; misses: number };
  /** Items waiting to be looked at by the vector indexer, by tenant. */
  vectorBacklog(): ReadonlyMap<string, number>;
  /**
   * Each tenant's models: when the loaded version was built (epoch ms; 0: none), the version that serves,
   * and, for the models the daemon keeps current for the tenant, the rows that version was not built from.
   */
  modelBuilds(): Iterable<{
    tenantId: string;
    model: string;
    builtAt: number;
    version?: number;
    /** The version published (the artifacts' pointer, or the store's record where daemons share one). */
    published?: number;
    /** The last version this daemon refused to load. */
    refused?: number;
    rowsBehind?: number;
  }>;
  /** The background work this daemon runs among those sharing the store: each claim it holds. */
  runnerClaims(): Iterable<{ kind: string; tenantId: string }>;
  /** Whether the data dir's disk is full (docs/configuration.md, "Health and metrics"). */
  diskFull(): boolean;
}

type RequestLabels = 'route' | 'method' | 'status_class';

/** Request durations, in seconds: from a fraction of a millisecond (cached answers) to a large batch. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const COMMIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BUILD_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** Status classes by the hundreds digit of a status (0: a status out of range). */
const STATUS_CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'];

/** One series of the request histogram: its labels, per-bucket (not cumulative) counts, sum and count. */
interface Series {
  labels: Record<RequestLabels, string>;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request histogram, its series found by route, then method, then status class, so that an
 * observation costs three lookups and a bucket search and allocates nothing: prom-client's own histogram
 * validates and hashes the labels on every observation (about 0.6 µs, as much as the rest of a cached
 * answer's bookkeeping). Registered with the registry as a metric of its own, it renders as any
 * prom-client histogram.
 */
class RequestHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Map<string, (Series | undefined)[]>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(route: string, method: string, statusClass: number, value: number): void {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = []));
    let series = byStatus[statusClass];
    if (!series) {
      series = {
        labels: { route, method, status_class: STATUS_CLASSES[statusClass] },
        buckets: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      };
      byStatus[statusClass] = series;
    }
    let bucket = 0;
    while (bucket < this.bounds.length && value > this.bounds[bucket]) bucket++;
    series.buckets[bucket]++;
    series.sum += value;
    series.count++;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: unknown[] } {
    const values: unknown[] = [];
    for (const byMethod of this.series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const series of byStatus) {
          if (!series) continue;
          const { labels, buckets, sum, count } = series;
          let cumulative = 0;
          this.bounds.forEach((le, i) => {
            cumulative += buckets[i];
            values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative });
          });
          values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count });
          values.push({ metricName: `${this.name}_sum`, labels, value: sum });
          values.push({ metricName: `${this.name}_count`, labels, value: count });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}

/**
 * The period of the timer whose lateness measures the event loop's delay (`nodejs_eventloop_lag_*`):
 * those figures time the whole interval between two of its runs, so they never fall below it, and a loop
 * that was blocked 3 ms reads 13 ms (docs/configuration.md, "Health and metrics").
 */
export const EVENT_LOOP_TIMER_MS = 10;

/**
 * The daemon's Prometheus metrics, in a registry of their own: request rate and latency per route, the
 * result cache's hits and misses, the write queue's depth and commit latency, model builds, ages, versions
 * and lag, the vector indexing backlog, and prom-client's process metrics (resident memory, event-loop
 * lag, GC).
 * Scrape-time values are read from `sources`; per-request work is one histogram observation.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: RequestHistogram;
  private readonly commits: Histogram;
  private readonly refusedWrites: Counter;
  private readonly failedMoves: Counter;
  private readonly diskFullRefusals: Counter;
  private readonly rateLimitCountFailures: Counter;
  private readonly builds: Histogram<'model' | 'outcome'>;
  private readonly clientErrors: Counter<'code'>;

  constructor(sources: MetricSources, options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics !== false)
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_TIMER_MS });
    this.requests = new RequestHistogram(
      'nextrec_http_request_duration_seconds',
      'HTTP requests by route pattern, method and status class: their count and how long they took',
      REQUEST_BUCKETS,
    );
    this.registry.registerMetric(this.requests as unknown as Histogram);
    this.clientErrors = new Counter({
      name: 'nextrec_http_malformed_requests_total',
      help: 'Requests refused before routing (malformed request line or headers, too large headers, timeouts), by error code',
      labelNames: ['code'],
      registers,
    });
    new Counter({
      name: 'nextrec_result_cache_hits_total',
      help: 'Recommendation requests answered from the result cache',
      registers,
      collect() {
        this.reset();
        this.inc(sources.resultCache().hits);
      },
    });
    new Counter({
      name: 'nextrec_result_cache_misses_total',
      help: 'Recommendation requests the result cache did not answer (ranked)',
      registers,
      collect() {
        this.reset();
        this.inc(sources.resultCache().misses);
      },
    });
    new Gauge({
      name: 'nextrec_result_cache_hit_ratio',
      help: 'Share of cached recommendation requests answered from the cache since the start (0 before any)',
      registers,
      collect() {
        const { hits, misses } = sources.resultCache();
        this.set(hits + misses === 0 ? 0 : hits / (hits + misses));
      },
    });
    new Gauge({
      name: 'nextrec_write_queue_records',
      help: 'Ingestion records queued or being committed (bounded by nextrec_write_queue_limit_records)',
      registers,
      collect() {
        this.set(sources.writeQueue().records);
      },
    });
    new Gauge({
      name: 'nextrec_write_queue_writes',
      help: 'Writes of any kind queued or being committed',
      registers,
      collect() {
        this.set(sources.writeQueue().writes);
      },
    });
    new Gauge({
      name: 'nextrec_write_queue_limit_records',
      help: 'The most ingestion records the write queue takes before it answers 503 OVERLOADED',
      registers,
      collect() {
        this.set(sources.writeQueue().limit);
      },
    });
    new Gauge({
      name: 'nextrec_interactions_log_rows',
      help: 'Interactions durable in the interactions log and not yet moved into the store',
      registers,
      collect() {
        this.set(sources.writeQueue().logRows);
      },
    });
    this.failedMoves = new Counter({
      name: 'nextrec_interactions_log_move_failures_total',
      help: 'Moves of the interactions log into the store that failed (its rows stay in the log)',
      registers,
    });
    this.refusedWrites = new Counter({
      name: 'nextrec_write_queue_refused_total',
      help: 'Ingestion requests refused with 503 OVERLOADED because the write queue was full',
      registers,
    });
    this.diskFullRefusals = new Counter({
      name: 'nextrec_disk_full_refusals_total',
      help: "Requests refused with 507 INSUFFICIENT_STORAGE because the data dir's disk was full",
      registers,
    });
    this.rateLimitCountFailures = new Counter({
      name: 'nextrec_rate_limit_count_failures_total',
      help: "Requests let through uncounted because the rate limits' Redis did not answer",
      registers,
    });
    new Gauge({
      name: 'nextrec_disk_full',
      help: "1 while the data dir's disk is full (from a write refused for room until one succeeds), else 0",
      registers,
      collect() {
        this.set(sources.diskFull() ? 1 : 0);
      },
    });
    this.commits = new Histogram({
      name: 'nextrec_write_commit_duration_seconds',
      help: 'Store transactions (group commits), from BEGIN to COMMIT',
      buckets: COMMIT_BUCKETS,
      registers,
    });
    this.builds = new Histogram({
      name: 'nextrec_model_build_duration_seconds',
      help: "Model builds of the daemon's scheduler (lake export, build, swap), by model and outcome",
      labelNames: ['model', 'outcome'],
      buckets: BUILD_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'nextrec_model_age_seconds',
      help: 'Seconds since the loaded version of each model was built, by tenant and model',
      labelNames: ['tenant', 'model'],
      registers,
      collect() {
        this.reset();
        const now = Date.now();
        for (const { tenantId, model, builtAt } of sources.modelBuilds()) {
          if (builtAt > 0) this.set({ tenant: tenantId, model }, Math.max(0, (now - builtAt) / 1000));
        }
      },
    });
    new Gauge({
      name: 'nextrec_model_version',
      help: 'The version of each model that serves, by tenant and model',
      labelNames: ['tenant', 'model'],
      registers,
      collect() {
        this.reset();
        for (const { tenantId, model, version } of sources.modelBuilds()) {
          if (version !== undefined) this.set({ tenant: tenantId, model }, version);
        }
      },
    });
    new Gauge({
      name: 'nextrec_model_version_published',
      help: 'The version of each model published to serve (daemons sharing a store: the recorded one), by tenant and model',
      labelNames: ['tenant', 'model'],
      registers,
      collect() {
        this.reset();
        for (const { tenantId, model, published } of sources.modelBuilds()) {
          if (published !== undefined) this.set({ tenant: tenantId, model }, published);
        }
      },
    });
    new Gauge({
      name: 'nextrec_model_version_refused',
      help: 'The last version of each model this daemon refused to load (it kept the one serving), by tenant and model',
      labelNames: ['tenant', 'model'],
      registers,
      collect() {
        this.reset();
        for (const { tenantId, model, refused } of sources.modelBuilds()) {
          if (refused !== undefined) this.set({ tenant: tenantId, model }, refused);
        }
      },
    });
    new Gauge({
      name: 'nextrec_runner_claims',
      help: "Background work this daemon runs among the daemons sharing its store: 1 per tenant and kind it claimed (models: builds, feeds: the feed schedule, retention: all tenants' as tenant *)",
      labelNames: ['kind', 'tenant'],
      registers,
      collect() {
        this.reset();
        for (const { kind, tenantId } of sources.runnerClaims()) this.set({ kind, tenant: tenantId }, 1);
      },
    });
    new Gauge({
      name: 'nextrec_model_rows_behind',
      help: 'Rows of each tenant the serving version of each model it uses was not built from: interactions (vectors: items)',
      labelNames: ['tenant', 'model'],
      registers,
      collect() {
        this.reset();
        for (const { tenantId, model, rowsBehind } of sources.modelBuilds()) {
          if (rowsBehind !== undefined) this.set({ tenant: tenantId, model }, rowsBehind);
        }
      },
    });
    new Gauge({
      name: 'nextrec_vector_indexing_backlog_items',
      help: 'Items waiting to be embedded for vector search, by tenant',
      labelNames: ['tenant'],
      registers,
      collect() {
        this.reset();
        for (const [tenant, items] of sources.vectorBacklog()) this.set({ tenant }, items);
      },
    });
  }

  /** One answered request; `route` is the route's pattern (`unmatched` when no route matched). */
  observeRequest(route: string, method: string, statusCode: number, seconds: number): void {
    const statusClass = Math.floor(statusCode / 100);
    this.requests.observe(route, method, statusClass >= 1 && statusClass <= 5 ? statusClass : 0, seconds);
  }

  observeCommit(seconds: number): void {
    this.commits.observe(seconds);
  }

  refusedWrite(): void {
    this.refusedWrites.inc();
  }

  diskFullRefusal(): void {
    this.diskFullRefusals.inc();
  }

  rateLimitCountFailed(): void {
    this.rateLimitCountFailures.inc();
  }

  failedMove(): void {
    this.failedMoves.inc();
  }

  observeBuild(models: readonly string[], seconds: number, outcome: 'ok' | 'failed'): void {
    for (const model of models) this.builds.observe({ model, outcome }, seconds);
  }

  malformedRequest(code: string): void {
    this.clientErrors.inc({ code });
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
