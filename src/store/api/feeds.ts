import type { MappedItem } from '../../contract/feeds.js';
import type { CatalogItem } from '../row-mapping.js';

/** A record of the source as staged: mapped, or only seen (its mapping failed but its id was read). */
export type StagedRecord = { mapped: true; item: MappedItem } | { mapped: false; externalId: string };

export interface AppliedSync {
  /** Items of the source that were mapped (each id once). */
  upserted: number;
  /** Feed-managed items the source did not list, now unavailable. */
  markedUnavailable: number;
}

/**
 * A sync whose apply committed, and which failed afterwards (taking the changed items into memory): the
 * catalog in the store changed, so "nothing changed" would be untrue.
 */
export class AppliedThenFailedError extends Error {
  constructor(
    readonly applied: AppliedSync,
    failure: unknown,
  ) {
    super(`the sync was applied, then failed: ${(failure as Error)?.message ?? String(failure)}`, {
      cause: failure,
    });
    this.name = 'AppliedThenFailedError';
  }
}

/**
 * A feed sync's records on their way to the catalog (docs/guide.md, "Catalog feeds"): staged in the store
 * page by page, so that a sync holds one page in memory whatever the size of the feed, and applied to the
 * items in one transaction only once the whole source was read. Nothing of it outlives the process: a
 * daemon that dies mid-sync leaves nothing behind. No write of another request interleaves with its steps.
 */
export interface FeedStaging {
  /** Adds a page's records, in source order. */
  append(records: readonly StagedRecord[]): Promise<void>;
  /**
   * Applies the staged source to the tenant's items in one transaction: each id's last record is upserted
   * (feed-managed and available; the category when a rule sets it; the attributes the rules set replaced,
   * a null one removed, the others kept), and every other feed-managed item of the tenant that is
   * available becomes unavailable. Items not managed by a feed and not in the source are not touched.
   * Then, still before any other write, the staged records are dropped, `dropped` runs, and each changed
   * item is handed to `changed` in chunks, as committed. A failure after the commit is an
   * AppliedThenFailedError.
   */
  apply(tenantId: string, changed: (items: CatalogItem[]) => void, dropped: () => void): Promise<AppliedSync>;
  /** Removes the staged records (after a sync, applied or not); never fails. */
  drop(): Promise<void>;
}

export interface FeedStore {
  /** Begins staging one sync's records. */
  stage(): Promise<FeedStaging>;
}
