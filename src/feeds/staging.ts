import type { Store } from '../store/store.js';
import type { AppliedSync, FeedStaging as StoreStaging, StagedRecord } from '../store/api/feeds.js';
import { fullCollection } from '../state/memory.js';
import type { CatalogItem } from '../state/item-catalog.js';

export type { StagedRecord };

/**
 * A sync that staged at least this many records runs a full garbage collection between its apply and
 * its changed items coming into memory (see `apply`).
 */
export const COLLECT_AFTER_RECORDS = 10_000;

/**
 * A sync's records on their way to the catalog, staged in the store (store.feeds, src/store/api/feeds.ts):
 * filled page by page, so a sync holds one page in memory whatever the size of the feed, and applied to
 * the items in one transaction only once the whole source was read.
 */
export class FeedStaging {
  private records = 0;
  private constructor(
    private readonly staged: StoreStaging,
    private readonly collect: () => void,
  ) {}

  /** @param collect a full garbage collection (V8's, unless a test counts them) */
  static async create(store: Store, collect = () => fullCollection()()): Promise<FeedStaging> {
    return new FeedStaging(await store.feeds.stage(), collect);
  }

  /** Adds a page's records, in source order. */
  append(records: readonly StagedRecord[]): Promise<void> {
    this.records += records.length;
    return this.staged.append(records);
  }

  /**
   * Applies the staged source to the tenant's items in one transaction (see the store's FeedStaging),
   * then, still before any other write, hands each changed item to `changed` in chunks, as committed.
   */
  apply(tenantId: string, changed: (items: CatalogItem[]) => void): Promise<AppliedSync> {
    // The staged records are gone before the changed items come into memory: the peak holds one of them.
    // So are the pages a large sync parsed while staging, garbage by now that V8 would collect only later:
    // collected, the items take their space in the heap rather than growing it (docs/guide.md, "Catalog
    // feeds").
    return this.staged.apply(tenantId, changed, () => {
      if (this.records >= COLLECT_AFTER_RECORDS) this.collect();
    });
  }

  /** Removes the staged records (after a sync, applied or not). */
  drop(): Promise<void> {
    return this.staged.drop();
  }
}
