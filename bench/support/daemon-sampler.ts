import { loadavg } from 'node:os';
import { EVENT_LOOP_TIMER_MS } from '../../src/server/metrics.js';
import type { BenchDaemon } from './bench-daemon.js';
import { mib, procStatus } from './daemon-memory.js';
import {
  buildsSince,
  gaugeValue,
  histogramTotals,
  parseModelBuilds,
  scrapeMetrics,
  totalsSince,
  type ModelBuilds,
} from './daemon-metrics.js';
import { lineSplitter, parseCollection, parseLogRecord, type Collection } from './daemon-output.js';
import { machineBusySeconds } from './machine-cpu.js';

/** What the daemon did over a window of bench/soak's traffic. */
export interface WindowSample {
  rssMiB: number;
  /** Cores the daemon's process used over the window (its build processes not included). */
  daemonCores: number;
  /** Cores the whole machine used: the daemon, its builds, the benchmark, and everyone else. */
  machineCores: number;
  loadAverage: number;
  builds: ModelBuilds[];
  /** The daemon's own view (GET /metrics): each route's requests and their mean time in Fastify. */
  routes: { route: string; count: number; meanMs: number }[];
  /** Group commits of the write queue: how many, and their mean time. */
  commits: { count: number; meanMs: number };
  /**
   * How long the event loop was held up beyond its timer's period (prom-client's delay since the last
   * scrape, less EVENT_LOOP_TIMER_MS, which every figure of it includes): p99 and longest.
   */
  eventLoopBlockedMs: { p99: number; max: number };
  /** Recommendations answered from the answer cache, of those that asked it. */
  cacheHitRatio: number;
  swaps: { model: unknown; ms: unknown }[];
  collections: { count: number; markCompacts: number; maxPauseMs: number; totalPauseMs: number };
  /** Log records of level warn or above. */
  warnings: string[];
}

/** What the daemon's output told, timed: on the epoch clock, as it arrived (a log record: as it was logged). */
export type DaemonEvent =
  | ({ type: 'collection'; atMs: number } & Collection)
  | { type: 'swap'; atMs: number; model: unknown; ms: unknown }
  | { type: 'warning'; atMs: number; msg: string };

/** Samples the daemon at the end of each window while the traffic runs, and follows its output. */
export class Sampler {
  readonly samples: WindowSample[] = [];
  readonly events: DaemonEvent[] = [];
  private metrics = '';
  private daemonCpu: number | undefined;
  private machineCpu: number | undefined;
  private pending = this.emptyEvents();

  constructor(
    private readonly bench: BenchDaemon,
    /** GET /metrics as the traffic started. */
    readonly startMetrics: string,
    private readonly windowMs: number,
  ) {
    bench.daemon.onOutput(lineSplitter((line) => this.read(line, Date.now())));
    this.metrics = startMetrics;
    this.daemonCpu = bench.daemon.cpuSeconds();
    this.machineCpu = machineBusySeconds();
  }

  private emptyEvents() {
    return {
      swaps: [] as WindowSample['swaps'],
      collections: { count: 0, markCompacts: 0, maxPauseMs: 0, totalPauseMs: 0 },
      warnings: [] as string[],
    };
  }

  private read(line: string, atMs: number): void {
    const collection = parseCollection(line);
    if (collection) {
      this.events.push({ type: 'collection', atMs, ...collection });
      const c = this.pending.collections;
      c.count++;
      if (collection.kind === 'Mark-Compact') c.markCompacts++;
      c.maxPauseMs = Math.max(c.maxPauseMs, collection.pauseMs);
      c.totalPauseMs = Number((c.totalPauseMs + collection.pauseMs).toFixed(2));
      return;
    }
    const record = parseLogRecord(line);
    if (record?.msg === 'model swapped in') {
      this.events.push({ type: 'swap', atMs: record.time, model: record.model, ms: record.ms });
      this.pending.swaps.push({ model: record.model, ms: record.ms });
    } else if (record && record.level >= 40) {
      this.events.push({ type: 'warning', atMs: record.time, msg: record.msg });
      this.pending.warnings.push(record.msg);
    }
  }

  async sample(): Promise<WindowSample> {
    const metrics = await scrapeMetrics(this.bench.daemon.url);
    const since = (name: string) =>
      totalsSince(histogramTotals(metrics, name), histogramTotals(this.metrics, name));
    const ms = (seconds: number, count: number) =>
      count === 0 ? 0 : Number(((1000 * seconds) / count).toFixed(2));
    const [commits = { count: 0, sum: 0 }] = since('nextrec_write_commit_duration_seconds');
    const blocked = (name: string) =>
      Number(Math.max(0, 1000 * (gaugeValue(metrics, name) ?? 0) - EVENT_LOOP_TIMER_MS).toFixed(2));
    const counted = (name: string) =>
      (gaugeValue(metrics, name) ?? 0) - (gaugeValue(this.metrics, name) ?? 0);
    const hits = counted('nextrec_result_cache_hits_total');
    const misses = counted('nextrec_result_cache_misses_total');
    const daemonCpu = this.bench.daemon.cpuSeconds();
    const machineCpu = machineBusySeconds();
    const cores = (after: number | undefined, before: number | undefined) =>
      after === undefined || before === undefined
        ? 0
        : Number(((after - before) / (this.windowMs / 1000)).toFixed(2));
    const sample: WindowSample = {
      rssMiB: mib(procStatus(this.bench.daemon.pid, 'VmRSS')),
      daemonCores: cores(daemonCpu, this.daemonCpu),
      machineCores: cores(machineCpu, this.machineCpu),
      loadAverage: loadavg()[0],
      builds: buildsSince(parseModelBuilds(metrics), parseModelBuilds(this.metrics)),
      routes: since('nextrec_http_request_duration_seconds').map(({ labels, count, sum }) => ({
        route: `${labels.method} ${labels.route}`,
        count,
        meanMs: ms(sum, count),
      })),
      commits: { count: commits.count, meanMs: ms(commits.sum, commits.count) },
      eventLoopBlockedMs: {
        p99: blocked('nodejs_eventloop_lag_p99_seconds'),
        max: blocked('nodejs_eventloop_lag_max_seconds'),
      },
      cacheHitRatio: hits + misses === 0 ? 0 : Number((hits / (hits + misses)).toFixed(3)),
      ...this.pending,
    };
    this.metrics = metrics;
    this.daemonCpu = daemonCpu;
    this.machineCpu = machineCpu;
    this.pending = this.emptyEvents();
    this.samples.push(sample);
    return sample;
  }
}
