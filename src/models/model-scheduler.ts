import { spawn } from 'node:child_process';
import type { ModelName } from '../artifacts/layout.js';
import type { LakeExporter } from '../store/lake-export.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import type { ModelLoader } from './model-loader.js';

export interface SchedulerLog {
  debug(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ModelSchedule {
  /** Below this many interactions a tenant's model follows every write (after `debounceMs`). */
  smallTenantInteractions: number;
  debounceMs: number;
  /** A larger tenant rebuilds when new interactions exceed this share of the model's. */
  staleShare: number;
  /** ...or when this much time passed with any new interaction. */
  intervalMs: number;
  /** A larger tenant's builds are at least this far apart, so a bulk load is not slowed by rebuilds. */
  largeTenantSpacingMs: number;
}

export const DEFAULT_SCHEDULE: ModelSchedule = {
  smallTenantInteractions: 100_000,
  debounceMs: 1_000,
  staleShare: 0.1,
  intervalMs: 10 * 60_000,
  largeTenantSpacingMs: 30_000,
};

/** The models the daemon builds for every tenant with interactions. */
export const DAEMON_MODELS: readonly ModelName[] = ['cooccurrence', 'factors'];

/** Builds a tenant's models from its lake and publishes them; rejects with the reason when it failed. */
export type BuildRunner = (tenantId: string, models: readonly ModelName[]) => Promise<void>;

const BUILD_SCRIPT = new URL('../../jobs/build-process.js', import.meta.url);

/** Runs the batch jobs in a process of their own (jobs/build-process.ts), as cron's `nextrec build` does. */
export function processBuildRunner(dataDir: string, script: URL = BUILD_SCRIPT): BuildRunner {
  return (tenantId, models) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [script.pathname, dataDir, tenantId, models.join(',')], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let errors = '';
      child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(errors.trim() || `build process ended with ${signal ?? `code ${code}`}`));
      });
    });
}

/**
 * Keeps every tenant's models current (CONTRACT, "Freshness of effects"): small tenants see new
 * interactions in their models within seconds, large ones on the share-or-interval rule. A build exports
 * the tenant's new rows to the lake, runs the jobs apart from the daemon, and has the loader swap the
 * new versions in. One build runs at a time.
 */
export class ModelScheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly queue: string[] = [];
  private running: Promise<void> | null = null;
  private interval: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private log: SchedulerLog = { debug: () => undefined, error: () => undefined };

  constructor(
    private readonly state: ServingState,
    private readonly lake: LakeExporter,
    private readonly loader: ModelLoader,
    private readonly runBuild: BuildRunner,
    private readonly schedule: ModelSchedule = DEFAULT_SCHEDULE,
    private readonly models: readonly ModelName[] = DAEMON_MODELS,
  ) {}

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
    if (
      !this.started ||
      this.stopped ||
      this.timers.has(tenant.tenantId) ||
      this.queue.includes(tenant.tenantId)
    )
      return;
    const modelCount = tenant.neighbours.interactionCount;
    const small = tenant.interactionTotal < this.schedule.smallTenantInteractions;
    const stale = tenant.interactionTotal - modelCount > this.schedule.staleShare * modelCount;
    if (!small && !stale) return;
    const delay = small
      ? this.schedule.debounceMs
      : Math.max(
          this.schedule.debounceMs,
          tenant.neighbours.builtAt + this.schedule.largeTenantSpacingMs - Date.now(),
        );
    const timer = setTimeout(() => {
      this.timers.delete(tenant.tenantId);
      this.enqueue(tenant.tenantId);
    }, delay);
    timer.unref();
    this.timers.set(tenant.tenantId, timer);
  }

  /** Waits for the build in progress; no new build starts afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.interval);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    await this.running;
  }

  private sweep(): void {
    for (const tenantId of this.state.ids()) {
      const tenant = this.state.get(tenantId)!;
      if (tenant.interactionTotal > tenant.neighbours.interactionCount) this.enqueue(tenantId);
    }
  }

  private enqueue(tenantId: string): void {
    if (this.stopped || this.queue.includes(tenantId)) return;
    this.queue.push(tenantId);
    this.kick();
  }

  private kick(): void {
    if (this.running || this.queue.length === 0 || this.stopped) return;
    this.running = this.buildNext().finally(() => {
      this.running = null;
      this.kick();
    });
  }

  private async buildNext(): Promise<void> {
    const tenantId = this.queue.shift()!;
    if (!this.state.get(tenantId)) return;
    const started = Date.now();
    try {
      await this.lake.flush(tenantId);
      await this.runBuild(tenantId, this.models);
      this.loader.poll();
      this.log.debug({ tenantId, ms: Date.now() - started }, 'models built');
    } catch (error) {
      this.log.error({ tenantId, reason: (error as Error).message }, 'model build failed');
    }
  }
}
