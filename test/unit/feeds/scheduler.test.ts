import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FEED_BODY, type Feed } from '../../../src/contract/feeds.js';
import { feedOf } from '../../../src/feeds/feeds.js';
import { FeedScheduler } from '../../../src/feeds/scheduler.js';
import { TenantState } from '../../../src/state/tenant-state.js';

function feed(id: string, state: Feed['state'], schedule: Record<string, unknown>): Feed {
  const body = FEED_BODY.parse({
    sourceType: 'json_url',
    url: 'http://127.0.0.1/feed',
    itemIdPath: 'id',
    ...schedule,
  });
  return feedOf(id, body, { state, createdAt: '', updatedAt: '', lastSync: null });
}

describe('feed schedules', () => {
  let tenant: TenantState;
  let calls: string[];
  let finish: (() => void)[];
  let scheduler: FeedScheduler;
  /** Syncs end at once rather than when the test says. */
  let instant: boolean;

  beforeEach(() => {
    vi.useFakeTimers({ now: Date.parse('2026-03-01T00:00:00Z') });
    tenant = new TenantState('t');
    calls = [];
    finish = [];
    instant = false;
    scheduler = new FeedScheduler((_tenant, feedId) => {
      calls.push(feedId);
      if (instant) return Promise.resolve();
      return new Promise<void>((resolve) => finish.push(resolve));
    });
  });

  afterEach(() => {
    scheduler.stop();
    vi.useRealTimers();
  });

  it('waits intervalMinutes after the end of each sync', async () => {
    tenant.feeds.set('a', feed('a', 'active', { scheduleMode: 'interval', intervalMinutes: 2 }));
    scheduler.refresh(tenant);
    await vi.advanceTimersByTimeAsync(119_000);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toEqual(['a']);
    // The sync runs for five minutes: no second one meanwhile, the next two minutes after its end.
    await vi.advanceTimersByTimeAsync(300_000);
    expect(calls).toEqual(['a']);
    finish[0]();
    await vi.advanceTimersByTimeAsync(119_000);
    expect(calls).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toEqual(['a', 'a']);
  });

  it('starts at each time of a cron expression (UTC), and follows changes of the active feed', async () => {
    tenant.feeds.set('a', feed('a', 'active', { scheduleMode: 'cron', cron: '*/10 * * * * *' }));
    tenant.feeds.set('b', feed('b', 'disabled', { scheduleMode: 'cron', cron: '* * * * * *' }));
    scheduler.refresh(tenant);
    // A sync still running when the next time comes is not doubled: that time is skipped.
    await vi.advanceTimersByTimeAsync(30_500);
    expect(calls).toEqual(['a']);
    finish[0]();
    instant = true;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(calls).toEqual(['a', 'a', 'a']);

    // Syncing is still the active feed: its schedule stays as it was.
    tenant.feeds.set('a', { ...tenant.feeds.get('a')!, state: 'syncing' });
    scheduler.refresh(tenant);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual(['a', 'a', 'a', 'a']);

    tenant.feeds.set('a', { ...tenant.feeds.get('a')!, state: 'disabled' });
    tenant.feeds.set('b', { ...tenant.feeds.get('b')!, state: 'active' });
    scheduler.refresh(tenant);
    calls.length = 0;
    await vi.advanceTimersByTimeAsync(3_000);
    expect(calls).toEqual(['b', 'b', 'b']);

    tenant.feeds.set('b', feed('b', 'active', { scheduleMode: 'manual' }));
    scheduler.refresh(tenant);
    calls.length = 0;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toEqual([]);
  });

  it('syncs only at the times this daemon runs the schedule, and takes it over once it may', async () => {
    scheduler.stop();
    let claimed = false;
    const asked: string[] = [];
    instant = true;
    scheduler = new FeedScheduler(
      (_tenant, feedId) => {
        calls.push(feedId);
        return Promise.resolve();
      },
      async (tenantId) => {
        asked.push(tenantId);
        return claimed;
      },
    );
    tenant.feeds.set('a', feed('a', 'active', { scheduleMode: 'cron', cron: '*/10 * * * * *' }));
    scheduler.refresh(tenant);
    // Another daemon runs it: its times pass here, each asked.
    await vi.advanceTimersByTimeAsync(30_500);
    expect(asked).toEqual(['t', 't', 't']);
    expect(calls).toEqual([]);
    // That daemon stopped: the next time is this one's.
    claimed = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual(['a']);
  });

  it('runs nothing once stopped', async () => {
    tenant.feeds.set('a', feed('a', 'active', { scheduleMode: 'cron', cron: '* * * * * *' }));
    scheduler.refresh(tenant);
    scheduler.stop();
    scheduler.refresh(tenant);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toEqual([]);
  });
});
