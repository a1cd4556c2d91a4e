import { Cron } from 'croner';
import type { Feed } from '../contract/feeds.js';
import type { TenantState } from '../state/tenant-state.js';

/** The longest wait a Node.js timer takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Scheduled {
  /** What the schedule was made from: the feed and its schedule. */
  signature: string;
  cancel(): void;
}

function signatureOf(feed: Feed): string {
  return JSON.stringify([feed.id, feed.scheduleMode, feed.intervalMinutes, feed.cron]);
}

/**
 * Syncs each tenant's active feed on its schedule (docs/guide.md, "Catalog feeds"), where this daemon runs
 * the tenant's schedule (`claim`): `interval` waits
 * intervalMinutes after the end of each sync (and after the schedule starts) before the next; `cron` starts
 * one at each time of the expression, in UTC; `manual` never. A sync already running for the feed (asked
 * for over HTTP or by the CLI) is joined rather than doubled, so a schedule never overlaps a sync.
 */
export class FeedScheduler {
  private readonly scheduled = new Map<string, Scheduled>();
  private stopped = false;

  constructor(
    /** Syncs the tenant's feed; its failure is the caller's to report (it is the feed's lastSync). */
    private readonly sync: (tenant: TenantState, feedId: string) => Promise<unknown>,
    /**
     * Whether this daemon runs the tenant's schedule (docs/batch-models.md, "Cluster mode"): among
     * daemons sharing a store, the one that claimed it; asked at each time the schedule comes due, so that
     * another daemon takes the schedule over at its next time once the one running it stopped.
     */
    private readonly claim: (tenantId: string) => Promise<boolean> = () => Promise.resolve(true),
  ) {}

  /** Schedules the tenant's active feed as it is now (after any change of the tenant's feeds). */
  refresh(tenant: TenantState): void {
    if (this.stopped) return;
    const feed = [...tenant.feeds.values()].find((f) => f.state === 'active' || f.state === 'syncing');
    const wanted = feed && feed.scheduleMode !== 'manual' ? signatureOf(feed) : undefined;
    const current = this.scheduled.get(tenant.tenantId);
    if (current?.signature === wanted) return;
    current?.cancel();
    this.scheduled.delete(tenant.tenantId);
    if (!feed || wanted === undefined) return;
    this.scheduled.set(
      tenant.tenantId,
      feed.scheduleMode === 'cron'
        ? this.onCron(tenant, feed, wanted)
        : this.onInterval(tenant, feed, wanted),
    );
  }

  /** Cancels every schedule; syncs already running are the caller's to stop. */
  stop(): void {
    this.stopped = true;
    for (const schedule of this.scheduled.values()) schedule.cancel();
    this.scheduled.clear();
  }

  private async run(tenant: TenantState, feedId: string): Promise<void> {
    if (!(await this.claim(tenant.tenantId))) return;
    await this.sync(tenant, feedId).catch(() => undefined);
  }

  private onCron(tenant: TenantState, feed: Feed, signature: string): Scheduled {
    const cron = new Cron(feed.cron!, { timezone: 'Etc/UTC', protect: true, unref: true }, () =>
      this.run(tenant, feed.id),
    );
    return { signature, cancel: () => cron.stop() };
  }

  private onInterval(tenant: TenantState, feed: Feed, signature: string): Scheduled {
    const intervalMs = feed.intervalMinutes! * 60_000;
    let timer: NodeJS.Timeout | undefined;
    let cancelled = false;
    const wait = (ms: number) => {
      if (cancelled) return;
      // A wait longer than a timer takes is made of several.
      timer = setTimeout(
        () => {
          if (ms > MAX_TIMER_MS) return wait(ms - MAX_TIMER_MS);
          void this.run(tenant, feed.id).then(() => wait(intervalMs));
        },
        Math.min(ms, MAX_TIMER_MS),
      );
      timer.unref();
    };
    wait(intervalMs);
    return {
      signature,
      cancel: () => {
        cancelled = true;
        clearTimeout(timer);
      },
    };
  }
}
