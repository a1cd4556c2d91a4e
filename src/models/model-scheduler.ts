import { fileURLToPath } from 'node:url';
import { CATALOG_MODELS, MODEL_NAMES, type ModelName } from '../artifacts/layout.js';
import { DISK_FULL_RETRY_MS, isDiskFull } from '../store/disk-full.js';
import type { LakeExporter } from '../store/lake-export.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import { DELTA_BATCH_ROOM } from '../vector/tenant-vectors.js';
import { QuietTimers } from '../quiet-timers.js';
import { BuildLauncher } from './build-launcher.js';
import type { ModelLoader } from './model-loader.js';

export interface SchedulerLog {
  debug(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ModelSchedule {
  /** Below this many interactions a tenant's co-occurrence follows every write (see `debounceMs`). */
  smallTenantInteractions: number;
  /**
   * A build that writes made due waits for them to pause this long: a bulk load is built once, after it,
   * rather than a second into it, on part of it...
   */
  debounceMs: number;
  /** ...but a small tenant's at most this long after the first of them (larger ones: their spacing). */
  maxDebounceMs: number;
  /** A model is rebuilt when new interactions exceed this share of the model's... */
  staleShare: number;
  /** ...or when this much time passed with any new interaction. */
  intervalMs: number;
  /** A larger tenant's co-occurrence builds are at least this far apart, so a bulk load is not slowed. */
  largeTenantSpacingMs: number;
  /** The slower models (EASE, factors) of any tenant are built at least this far apart. */
  slowModelSpacingMs: number;
}

export const DEFAULT_SCHEDULE: ModelSchedule = {
  smallTenantInteractions: 100_000,
  debounceMs: 1_000,
  maxDebounceMs: 2_000,
  staleShare: 0.1,
  intervalMs: 10 * 60_000,
  largeTenantSpacingMs: 30_000,
  slowModelSpacingMs: 60_000,
};

/**
 * Builds a tenant's models from its lake and publishes them; rejects with the reason when it failed, and
 * soon after `signal` aborts (the daemon is stopping), having published nothing more.
 */
/** One build of some of a tenant's models: its seconds, and whether its versions were published. */
export type BuildListener = (models: readonly ModelName[], seconds: number, outcome: 'ok' | 'failed') => void;

export type BuildRunner = ((
  tenantId: string,
  models: readonly ModelName[],
  signal: AbortSignal,
) => Promise<void>) & {
  /** Ends what the runner keeps for its builds (the launcher process), once the scheduler stopped. */
  close?: () => void;
};

const BUILD_SCRIPT = new URL('../../jobs/build-process.js', import.meta.url);

/**
 * Runs the batch jobs in a process of their own (jobs/build-process.ts), as cron's `nextrec build` does,
 * started by `launcher` (build-launcher.ts) rather than by the daemon itself, at its niceness.
 */
export function processBuildRunner(
  dataDir: string,
  modelDir?: string,
  script: URL = BUILD_SCRIPT,
  launcher = new BuildLauncher(),
): BuildRunner {
  // The vectors job embeds with the daemon's model, so that its vectors and the daemon's compare.
  const env = modelDir ? { ...process.env, NEXTREC_MODEL_DIR: modelDir } : process.env;
  // An abort ends the process (SIGTERM): it may leave a partial version folder, never a version.
  const run: BuildRunner = (tenantId, models, signal) =>
    launcher.run([fileURLToPath(script), dataDir, tenantId, models.join(',')], env, signal);
  return Object.assign(run, { close: () => launcher.close() });
}

/**
 * How far a tenant's model is behind: it was built from `built` of the tenant's `current` rows (its
 * interactions; for vectors, the items embedded and those waiting for the build), at `builtAt`.
 */
interface Progress {
  current: number;
  built: number;
  builtAt: number;
  /**
   * Whether the model is to be built as soon as possible, whatever the stale share and the spacing
   * (vectors only): items wait for it with no vector of their text, or the delta has less room left than
   * a batch (DELTA_BATCH_ROOM).
   */
  due: boolean;
}

/** When the tenant's loaded version of `model` was built (epoch ms; 0: none is loaded). */
export function modelBuiltAt(tenant: TenantState, model: ModelName): number {
  return progress(tenant, model).builtAt;
}

/**
 * The tenant's rows its loaded version of `model` was not built from: interactions (vectors: items
 * embedded since, or waiting for, the build); all of them when none is loaded.
 */
export function modelRowsBehind(tenant: TenantState, model: ModelName): number {
  const { current, built } = progress(tenant, model);
  return Math.max(0, current - built);
}

function progress(tenant: TenantState, model: ModelName): Progress {
  if (model === 'vectors') {
    const { vectors } = tenant;
    return {
      current: vectors.baseRows + vectors.deltaSize + vectors.awaitingBuild.size,
      built: vectors.baseRows,
      builtAt: vectors.builtAt,
      due: vectors.awaitingBuild.size > 0 || vectors.deltaRoom < DELTA_BATCH_ROOM,
    };
  }
  const loaded =
    model === 'factors'
      ? (tenant.factors ?? { interactionCount: 0, builtAt: 0 })
      : tenant.neighbourModel(model);
  return {
    current: tenant.interactionTotal,
    built: loaded.interactionCount,
    builtAt: loaded.builtAt,
    due: false,
  };
}

/** Which tenants a lane builds for: those under the small size, those at or above it, or all. */
type LaneTenants = 'small' | 'large' | 'all';

/**
 * One line of builds: its models, the tenants it builds them for, how it follows their writes, and the
 * build it runs (one at a time). Small tenants' co-occurrence is quick to build and follows every write,
 * in a lane of its own, so that a larger tenant's build never holds it back; larger tenants'
 * co-occurrence follows on the share-or-interval rule, and the slower models at a distance, each in a
 * lane of their own.
 */
class Lane {
  /** Tenants whose build waits for their writes to pause (see `committed`). */
  private readonly timers: QuietTimers;
  private readonly queue: string[] = [];
  /** Queued tenants to build whatever their growth (see ModelScheduler.rebuild). */
  private readonly forced = new Set<string>();
  running: Promise<void> | null = null;
  stopped = false;

  constructor(
    private readonly scheduler: ModelScheduler,
    readonly models: readonly ModelName[],
    private readonly tenants: LaneTenants,
    readonly runBuild: BuildRunner,
    private readonly schedule: ModelSchedule,
  ) {
    this.timers = new QuietTimers(schedule.debounceMs, schedule.maxDebounceMs, (tenantId) =>
      this.enqueue(tenantId),
    );
  }

  /** The lane's models this tenant uses, when the lane builds for a tenant of its size. */
  modelsOf(tenant: TenantState): ModelName[] {
    if (this.tenants !== 'all') {
      const small = tenant.interactionTotal < this.schedule.smallTenantInteractions;
      if (small !== (this.tenants === 'small')) return [];
    }
    return this.scheduler.modelsFor(tenant).filter((model) => this.models.includes(model));
  }

  /** The furthest behind of the tenant's models in this lane (none: nothing to build). */
  private oldest(tenant: TenantState): Progress | undefined {
    const states = this.modelsOf(tenant).map((model) => progress(tenant, model));
    if (states.length === 0) return undefined;
    return states.reduce((a, b) => (a.current - a.built >= b.current - b.built ? a : b));
  }

  /**
   * Interactions of the tenant were committed. When that makes one of the lane's models due, its build
   * waits until the tenant's writes pause (`debounceMs`). A small tenant's, or a model due at once, waits
   * at most `maxDebounceMs` (its new interactions show within 5 s: docs/batch-models.md); a larger
   * tenant's at most the lane's spacing, and until the spacing since its last build is over. A tenant that
   * grows out of the small lane's size while it waits there is left to the large lane: the wait ends in
   * no build.
   */
  committed(tenant: TenantState): void {
    const { tenantId } = tenant;
    if (this.stopped || this.queue.includes(tenantId)) return;
    // A build that waits for writes to pause waits for this one too, within the limits it waits under.
    if (this.timers.has(tenantId)) {
      this.timers.touch(tenantId);
      return;
    }
    const model = this.oldest(tenant);
    if (!model) return;
    const small = this.tenants === 'small';
    const stale =
      model.due ||
      (model.current > model.built && model.current - model.built > this.schedule.staleShare * model.built);
    if (!small && !stale) return;
    const spacing =
      this.tenants === 'large' ? this.schedule.largeTenantSpacingMs : this.schedule.slowModelSpacingMs;
    this.timers.touch(
      tenantId,
      small || model.due
        ? { maxWaitMs: this.schedule.maxDebounceMs }
        : { maxWaitMs: spacing, notBefore: model.builtAt + spacing },
    );
  }

  /** Enqueues the tenant when one of its models in this lane saw fewer interactions than it has. */
  sweep(tenant: TenantState): void {
    if (this.behind(tenant)) this.enqueue(tenant.tenantId);
  }

  stop(): Promise<void> | null {
    this.stopped = true;
    this.timers.clear();
    this.queue.length = 0;
    this.forced.clear();
    return this.running;
  }

  /**
   * Builds the tenant's models of this lane as soon as the lane is free: if one of them is still behind
   * then (a build that ran meanwhile may have caught up), or, `force`d, whatever their growth.
   */
  enqueue(tenantId: string, force = false): void {
    if (this.stopped) return;
    if (force) this.forced.add(tenantId);
    if (this.queue.includes(tenantId)) return;
    this.queue.push(tenantId);
    this.kick();
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    let tenantId: string | undefined;
    while ((tenantId = this.queue.shift()) !== undefined) {
      if (this.forced.delete(tenantId)) break;
      const tenant = this.scheduler.tenant(tenantId);
      if (tenant && this.behind(tenant)) break;
    }
    if (tenantId === undefined) return;
    this.running = this.scheduler.build(this, tenantId).finally(() => {
      this.running = null;
      this.kick();
    });
  }

  /** Whether one of the lane's models of the tenant saw fewer rows than it has (a due model always did). */
  private behind(tenant: TenantState): boolean {
    const model = this.oldest(tenant);
    return model !== undefined && model.current > model.built;
  }
}

/** Co-occurrence: the model every logic type falls back to, quick to build. */
const FAST_MODELS: readonly ModelName[] = ['cooccurrence'];

/**
 * Keeps every tenant's models current (CONTRACT, "Freshness of effects"): small tenants see new
 * interactions in their co-occurrence within seconds, larger ones on the share-or-interval rule, and the
 * slower models (EASE, factors) follow at most once a minute. A build exports the tenant's new rows to
 * the lake, runs the jobs in a process apart from the daemon, and has the loader swap the new versions
 * in. The daemon builds only the models a tenant's requests use (see `modelsInUse`).
 */
export class ModelScheduler {
  private readonly lanes: Lane[];
  private interval: NodeJS.Timeout | undefined;
  private started = false;
  private readonly stopping = new AbortController();
  private log: SchedulerLog = { debug: () => undefined, error: () => undefined };
  private buildListener: BuildListener = () => undefined;

  constructor(
    private readonly state: ServingState,
    private readonly lake: LakeExporter,
    private readonly loader: ModelLoader,
    private readonly runBuild: BuildRunner,
    readonly modelsFor: (tenant: TenantState) => readonly ModelName[],
    private readonly schedule: ModelSchedule = DEFAULT_SCHEDULE,
    /** Small tenants' co-occurrence builds (default: `runBuild`'s). */
    private readonly runQuickBuild: BuildRunner = runBuild,
    /**
     * Whether this daemon runs the tenant's builds (docs/batch-models.md, "Cluster mode"): among daemons
     * sharing a store, the one that claimed them (`store.runners`); the others swap its versions in.
     */
    private readonly claim: (tenantId: string) => Promise<boolean> = () => Promise.resolve(true),
  ) {
    const slow = MODEL_NAMES.filter((model) => !FAST_MODELS.includes(model) && model !== 'vectors');
    this.lanes = [
      new Lane(this, FAST_MODELS, 'small', runQuickBuild, schedule),
      new Lane(this, FAST_MODELS, 'large', runBuild, schedule),
      new Lane(this, slow, 'all', runBuild, schedule),
      new Lane(this, ['vectors'], 'all', runBuild, schedule),
    ];
  }

  /** Told how long each build took and how it ended (metrics); not told of builds ended by shutdown. */
  onBuilt(listener: BuildListener): void {
    this.buildListener = listener;
  }

  /** Builds every tenant's models that need it, then follows writes; only the daemon starts it. */
  start(log: SchedulerLog): void {
    this.log = log;
    this.started = true;
    this.sweep();
    this.interval = setInterval(() => this.sweep(), this.schedule.intervalMs);
    this.interval.unref();
  }

  /** Called after interactions of a tenant are committed. */
  interactionsCommitted(tenant: TenantState): void {
    if (!this.started) return;
    for (const lane of this.lanes) lane.committed(tenant);
  }

  /** Called after items of a tenant were embedded: the vectors artifact follows at a distance. */
  vectorsChanged(tenant: TenantState): void {
    if (!this.started) return;
    this.lanes[3].committed(tenant);
  }

  /** Rebuilds every model of the tenant soon, whatever its growth (a user was deleted). */
  rebuild(tenantId: string): void {
    if (!this.started) return;
    for (const lane of this.lanes) lane.enqueue(tenantId, true);
  }

  /** @internal the tenant a lane builds for, while it exists */
  tenant(tenantId: string): TenantState | undefined {
    return this.state.get(tenantId);
  }

  /** Ends the builds in progress (a stopping daemon does not wait for them); no new build starts. */
  async stop(): Promise<void> {
    clearInterval(this.interval);
    this.stopping.abort();
    await Promise.all(this.lanes.map((lane) => lane.stop()));
    this.runBuild.close?.();
    if (this.runQuickBuild !== this.runBuild) this.runQuickBuild.close?.();
  }

  private sweep(): void {
    for (const tenantId of this.state.ids()) {
      for (const lane of this.lanes) lane.sweep(this.state.get(tenantId)!);
    }
  }

  /** @internal one build of a lane, where this daemon runs the tenant's: export the lake, build, swap in */
  async build(lane: Lane, tenantId: string): Promise<void> {
    const tenant = this.state.get(tenantId);
    if (!tenant) return;
    const models = lane.modelsOf(tenant);
    if (models.length === 0) return;
    if (!(await this.claim(tenantId))) {
      this.log.debug({ tenantId, models }, "the tenant's models are built by another daemon");
      return;
    }
    const started = Date.now();
    try {
      // A build that reads no catalog leaves it, and the store's records log, to the export that follows
      // commits (docs/batch-models.md, "The lake").
      await this.lake.flush(tenantId, models.some((model) => CATALOG_MODELS.has(model)) ? 'all' : 'events');
      const exported = Date.now();
      await lane.runBuild(tenantId, models, this.stopping.signal);
      const built = Date.now();
      await this.loader.pollAgain(tenantId);
      const ms = { exportMs: exported - started, buildMs: built - exported, loadMs: Date.now() - built };
      this.log.debug({ tenantId, models, ms: Date.now() - started, ...ms }, 'models built');
      this.buildListener(models, (Date.now() - started) / 1000, 'ok');
    } catch (error) {
      if (this.stopping.signal.aborted) this.log.debug({ tenantId, models }, 'model build ended by shutdown');
      else {
        this.log.error({ tenantId, models, reason: (error as Error).message }, 'model build failed');
        this.buildListener(models, (Date.now() - started) / 1000, 'failed');
        // A full disk frees up (docs/configuration.md, "Health and metrics"): the build is tried again.
        if (isDiskFull(error)) setTimeout(() => lane.enqueue(tenantId), DISK_FULL_RETRY_MS).unref();
      }
    }
  }
}
