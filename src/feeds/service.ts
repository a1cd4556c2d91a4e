import type { Feed, FeedBody, LastSync, PreviewResult, SyncResult } from '../contract/feeds.js';
import { ApiError } from '../contract/errors.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import { AppliedThenFailedError } from '../store/api/feeds.js';
import type { Store } from '../store/store.js';
import { DISK_FULL_RETRY_MS, isDiskFull } from '../store/disk-full.js';
import type { LakeExporter } from '../store/lake-export.js';
import type { VectorIndexer } from '../models/vector-indexer.js';
import {
  activeFeed,
  changeFeeds,
  conflict,
  feedOf,
  getFeed,
  listFeeds,
  newFeedId,
  notFound,
  syncedItemsCommitted,
  type FeedView,
} from './feeds.js';
import { FeedFetchError } from './fetch.js';
import { FeedScheduler } from './scheduler.js';
import type { FeedNetwork } from './network.js';
import { previewFeed, syncFeedIntoStore, type SyncProgress } from './sync.js';

/** Where feed work that nobody waits for reports (the daemon's logger). */
export interface FeedLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

interface RunningSync {
  feedId: string;
  promise: Promise<SyncResult>;
  controller: AbortController;
  progress: SyncProgress;
  listeners: Set<(progress: SyncProgress) => void>;
}

/** `GET /tenants/:tenantId/feeds/sync`: the tenant's active feed and how far its running sync got. */
export interface SyncStatus {
  feedId: string | null;
  state: Feed['state'] | null;
  progress: SyncProgress | null;
}

/**
 * Catalog feeds (docs/guide.md, "Catalog feeds"): their configuration and states, preview, activation, and
 * syncs. One sync per feed at a time: a sync asked for while one runs (over HTTP, by the CLI or by the
 * schedule) joins it and gets its result.
 */
export class FeedService {
  private readonly running = new Map<string, RunningSync>();
  private readonly scheduler: FeedScheduler;
  private scheduling = false;
  private stopped = false;
  private log: FeedLog = { info: () => undefined, error: () => undefined };

  constructor(
    private readonly store: Store,
    private readonly state: ServingState,
    private readonly lake: LakeExporter,
    private readonly vectors: VectorIndexer,
    /** Where sources may be fetched from (docs/guide.md, "Catalog feeds"). */
    private readonly network: FeedNetwork,
  ) {
    this.scheduler = new FeedScheduler(
      (tenant, feedId) =>
        this.sync(tenant, feedId).catch((error: unknown) => {
          this.log.error(
            { tenantId: tenant.tenantId, feedId, reason: (error as Error).message },
            'scheduled feed sync failed',
          );
        }),
      // One daemon runs a tenant's schedule among those sharing the store.
      (tenantId) => this.store.runners.claim('feeds', tenantId),
    );
  }

  list(tenant: TenantState): Feed[] {
    return listFeeds(tenant);
  }

  get(tenant: TenantState, id: string): Feed {
    return getFeed(tenant, id);
  }

  async create(tenant: TenantState, body: FeedBody): Promise<Feed> {
    const id = body.id ?? newFeedId();
    return this.change(tenant, (view, now) => {
      if (view.get(id)) throw conflict(`feed '${id}' already exists`);
      const feed = feedOf(id, body, { state: 'draft', createdAt: now, updatedAt: now, lastSync: null });
      return { result: feed, store: [feed] };
    });
  }

  /** Whole replacement of the configuration; the feed is a draft again (preview it before activating). */
  async replace(tenant: TenantState, id: string, body: FeedBody): Promise<Feed> {
    return this.change(tenant, (view, now) => {
      const current = this.existing(view, id);
      if (current.state === 'syncing')
        throw conflict(`feed '${id}' is syncing; change it once the sync has finished`);
      const feed = feedOf(id, body, {
        state: 'draft',
        createdAt: current.createdAt,
        updatedAt: now,
        lastSync: current.lastSync,
      });
      return { result: feed, store: [feed] };
    });
  }

  /** Removes the configuration; items it synced stay as they are. */
  async remove(tenant: TenantState, id: string): Promise<void> {
    await this.change(tenant, (view) => {
      const current = this.existing(view, id);
      if (current.state === 'syncing')
        throw conflict(`feed '${id}' is syncing; delete it once the sync has finished`);
      return { result: current, store: [], remove: [id] };
    });
  }

  /** Reads and maps the source's first page, storing no item; a draft becomes previewed. */
  async preview(tenant: TenantState, id: string): Promise<PreviewResult> {
    const feed = getFeed(tenant, id);
    let result: PreviewResult;
    try {
      result = await previewFeed(feed, this.network);
    } catch (error) {
      throw this.fetchFailure(id, error);
    }
    await this.change(tenant, (view, now) => {
      const current = this.existing(view, id);
      // Only the configuration that was previewed moves on (a PUT meanwhile made a new draft).
      if (current !== feed || current.state !== 'draft') return { result: current, store: [] };
      const previewed: Feed = { ...current, state: 'previewed', updatedAt: now };
      return { result: previewed, store: [previewed] };
    });
    return result;
  }

  /** Makes the feed the tenant's active one; the feed active before is disabled. */
  async activate(tenant: TenantState, id: string): Promise<Feed> {
    return this.change(tenant, (view, now) => {
      const target = this.existing(view, id);
      if (target.state === 'active' || target.state === 'syncing') return { result: target, store: [] };
      if (target.state === 'draft')
        throw conflict(`feed '${id}' is a draft: preview it before activating it`);
      const busy = view.all().find((feed) => feed.state === 'syncing');
      if (busy) throw conflict(`feed '${busy.id}' is syncing; activate another feed once it has finished`);
      const activated: Feed = { ...target, state: 'active', updatedAt: now };
      const disabled = view
        .all()
        .filter((feed) => feed.id !== id && feed.state === 'active')
        .map((feed): Feed => ({ ...feed, state: 'disabled', updatedAt: now }));
      return { result: activated, store: [activated, ...disabled] };
    });
  }

  /** Stops an active feed's schedule and syncs; activating it again needs no new preview. */
  async disable(tenant: TenantState, id: string): Promise<Feed> {
    return this.change(tenant, (view, now) => {
      const target = this.existing(view, id);
      if (target.state === 'disabled') return { result: target, store: [] };
      if (target.state === 'syncing')
        throw conflict(`feed '${id}' is syncing; disable it once the sync has finished`);
      if (target.state !== 'active')
        throw conflict(`feed '${id}' is ${target.state}: only an active feed is disabled`);
      const disabled: Feed = { ...target, state: 'disabled', updatedAt: now };
      return { result: disabled, store: [disabled] };
    });
  }

  /**
   * Syncs an active feed, or joins its sync already running. 409 for a feed that is not active; 502
   * FEED_FETCH_FAILED when the source could not be read whole, which changes nothing.
   */
  sync(tenant: TenantState, id: string, progressed?: (progress: SyncProgress) => void): Promise<SyncResult> {
    const key = `${tenant.tenantId}\u0000${id}`;
    const running = this.running.get(key);
    if (running) {
      if (progressed) running.listeners.add(progressed);
      return running.promise;
    }
    try {
      if (this.stopped) throw new Error('feed syncs are stopped');
      const feed = getFeed(tenant, id);
      if (feed.state !== 'active') throw this.notActive(feed);
    } catch (error) {
      return Promise.reject(error);
    }
    const entry: RunningSync = {
      feedId: id,
      promise: Promise.resolve(undefined as never),
      controller: new AbortController(),
      progress: { pages: 0, records: 0 },
      listeners: new Set(progressed ? [progressed] : []),
    };
    entry.promise = this.runSync(tenant, id, entry).finally(() => this.running.delete(key));
    this.running.set(key, entry);
    return entry.promise;
  }

  /** Syncs the tenant's active feed (the CLI's `nextrec feed sync`). */
  syncActive(tenant: TenantState, progressed?: (progress: SyncProgress) => void): Promise<SyncResult> {
    const feed = activeFeed(tenant);
    if (!feed)
      return Promise.reject(new ApiError('NOT_FOUND', `tenant '${tenant.tenantId}' has no active feed`));
    return this.sync(tenant, feed.id, progressed);
  }

  /** The tenant's active feed and the progress of its running sync. */
  status(tenant: TenantState): SyncStatus {
    const feed = activeFeed(tenant);
    if (!feed) return { feedId: null, state: null, progress: null };
    const running = this.running.get(`${tenant.tenantId}\u0000${feed.id}`);
    return { feedId: feed.id, state: feed.state, progress: running ? { ...running.progress } : null };
  }

  /** Runs the schedules of every tenant's active feed from now on (the daemon). */
  start(log: FeedLog): void {
    this.log = log;
    this.scheduling = true;
    for (const tenantId of this.state.ids()) this.scheduler.refresh(this.state.get(tenantId)!);
  }

  /** Cancels the schedules and stops running syncs (they change nothing); resolves once they ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.scheduler.stop();
    const running = [...this.running.values()];
    for (const entry of running) entry.controller.abort();
    await Promise.allSettled(running.map((entry) => entry.promise));
  }

  private async runSync(tenant: TenantState, id: string, entry: RunningSync): Promise<SyncResult> {
    const release = this.lake.hold(tenant.tenantId);
    try {
      return await this.syncHeld(tenant, id, entry);
    } finally {
      release();
    }
  }

  /** A sync, the tenant's lake exports held meanwhile (see LakeExporter.hold). */
  private async syncHeld(tenant: TenantState, id: string, entry: RunningSync): Promise<SyncResult> {
    const startedAt = new Date().toISOString();
    const feed = await this.change(tenant, (view, now) => {
      const current = this.existing(view, id);
      if (current.state !== 'active') throw this.notActive(current);
      const syncing: Feed = { ...current, state: 'syncing', updatedAt: now };
      return { result: syncing, store: [syncing] };
    });
    let result: SyncResult | undefined;
    let failure: unknown;
    const changed: string[] = [];
    try {
      result = await syncFeedIntoStore(
        feed,
        this.network,
        this.store,
        tenant.tenantId,
        (items) => syncedItemsCommitted(tenant, items, changed),
        (progress) => {
          entry.progress = progress;
          for (const listener of entry.listeners) listener(progress);
        },
        entry.controller.signal,
      );
    } catch (error) {
      failure = error;
    }
    // The lake follows the stored catalog, which changed also when the sync failed after its apply.
    if (result || failure instanceof AppliedThenFailedError) this.lake.committed(tenant.tenantId);
    // Vector indexing follows the items the serving state took (committed, even when the sync failed
    // after its apply), as one change: one larger than the room the vectors since the last build have
    // waits for the vectors build whole (docs/guide.md, "Vectors and search"), rather than its first chunks
    // being embedded here and again in that build.
    this.vectors.itemsChanged(tenant, changed);
    const lastSync: LastSync = result
      ? { status: 'succeeded', ...result }
      : {
          status: 'failed',
          message: this.failureMessage(tenant, id, failure),
          startedAt,
          finishedAt: new Date().toISOString(),
        };
    try {
      await this.finish(tenant, id, lastSync);
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      this.finishLater(tenant, id, lastSync);
      if (result) {
        throw new ApiError(
          'INSUFFICIENT_STORAGE',
          `feed '${id}' synced (${result.upserted} items upserted, ${result.markedUnavailable} marked ` +
            "unavailable), but the data dir's disk is full: the feed's state is stored once space returns",
        );
      }
    }
    if (failure !== undefined) throw this.fetchFailure(id, failure);
    return result!;
  }

  /** Stores the outcome of a sync on the feed, which is active again (unless changed meanwhile). */
  private finish(tenant: TenantState, id: string, lastSync: LastSync): Promise<unknown> {
    return this.change(tenant, (view, now) => {
      const current = view.get(id);
      if (!current) return { result: undefined, store: [] };
      const done: Feed = {
        ...current,
        state: current.state === 'syncing' ? 'active' : current.state,
        updatedAt: now,
        lastSync,
      };
      return { result: done, store: [done] };
    });
  }

  /**
   * A sync's outcome that a full disk kept from being stored: tried again DISK_FULL_RETRY_MS later until it
   * is, else the feed would stay `syncing`, refusing every change (docs/configuration.md, "Health and metrics").
   */
  private finishLater(tenant: TenantState, id: string, lastSync: LastSync): void {
    this.log.error({ tenantId: tenant.tenantId, feedId: id }, "a feed's sync outcome waits for disk space");
    const retry = setTimeout(() => {
      if (this.stopped) return;
      this.finish(tenant, id, lastSync).catch((error: unknown) => {
        if (isDiskFull(error)) this.finishLater(tenant, id, lastSync);
        else this.log.error({ tenantId: tenant.tenantId, feedId: id, err: error }, 'feed sync outcome lost');
      });
    }, DISK_FULL_RETRY_MS);
    retry.unref();
  }

  private failureMessage(tenant: TenantState, id: string, error: unknown): string {
    if (error instanceof FeedFetchError) return error.message;
    this.log.error({ tenantId: tenant.tenantId, feedId: id, err: error }, 'feed sync failed');
    if (error instanceof AppliedThenFailedError) {
      const { upserted, markedUnavailable } = error.applied;
      return (
        `the sync was applied to the stored catalog (${upserted} items upserted, ${markedUnavailable} ` +
        'marked unavailable), then failed on a fault of the daemon while serving took the changed items; ' +
        'the recommendations may not show them until the daemon restarts'
      );
    }
    return /nothing changed/.test((error as Error).message ?? '')
      ? (error as Error).message
      : 'the sync failed on a fault of the daemon; nothing changed';
  }

  private fetchFailure(id: string, error: unknown): unknown {
    if (!(error instanceof FeedFetchError)) return error;
    return new ApiError('FEED_FETCH_FAILED', `feed '${id}': ${error.message}; nothing changed`);
  }

  private notActive(feed: Feed): ApiError {
    return conflict(`feed '${feed.id}' is ${feed.state}: only the active feed syncs`);
  }

  private existing(view: FeedView, id: string): Feed {
    const feed = view.get(id);
    if (!feed) throw notFound(id);
    return feed;
  }

  private async change<T extends Feed | undefined>(
    tenant: TenantState,
    decide: (view: FeedView, now: string) => { result: T; store: Feed[]; remove?: string[] },
  ): Promise<T> {
    let result: T | undefined;
    await changeFeeds(
      this.store,
      tenant,
      (view, now) => {
        const decision = decide(view, now);
        result = decision.result;
        return decision;
      },
      (changed) => {
        if (this.scheduling) this.scheduler.refresh(changed);
      },
    );
    return result as T;
  }
}
