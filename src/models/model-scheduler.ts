import type { Runtime } from '../runtime.js';
import type { TenantState } from '../state/tenant-state.js';
import { buildCooccurrence } from './cooccurrence-builder.js';

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

/**
 * Keeps every tenant's co-occurrence neighbours current: small tenants see new interactions in their
 * model within seconds, large ones on the share-or-interval rule. One build runs at a time (the machine's
 * cores also serve requests), and a build replaces the tenant's model in one assignment.
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
    private readonly runtime: Pick<Runtime, 'store' | 'state'>,
    private readonly schedule: ModelSchedule = DEFAULT_SCHEDULE,
  ) {}

  /** Builds every tenant's model once, then follows writes; only the daemon starts it. */
  start(log: SchedulerLog): void {
    this.log = log;
    this.started = true;
    for (const tenantId of this.runtime.state.ids()) {
      if (this.runtime.state.get(tenantId)!.interactionTotal > 0) this.enqueue(tenantId);
    }
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
    for (const tenantId of this.runtime.state.ids()) {
      const tenant = this.runtime.state.get(tenantId)!;
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
    const tenant = this.runtime.state.get(tenantId);
    if (!tenant) return;
    const started = Date.now();
    try {
      const count = tenant.interactionTotal;
      const model = await buildCooccurrence(this.runtime.store, tenantId, tenant.catalog.externalIds, count);
      tenant.replaceNeighbours(model);
      this.log.debug(
        { tenantId, ms: Date.now() - started, pairs: model.neighbours.length },
        'co-occurrence built',
      );
    } catch (error) {
      this.log.error({ err: error, tenantId }, 'co-occurrence build failed');
    }
  }
}
