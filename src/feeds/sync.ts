import {
  MAX_REPORTED_ERRORS,
  PREVIEW_ITEMS,
  type FeedConfig,
  type PreviewResult,
  type RecordError,
  type SyncResult,
} from '../contract/feeds.js';
import type { Store } from '../store/store.js';
import type { CatalogItem } from '../state/item-catalog.js';
import { fetchPages, type FetchedPage } from './fetch.js';
import type { FeedNetwork } from './network.js';
import { compileMapping, previewItem } from './mapping.js';
import { FeedStaging, type StagedRecord } from './staging.js';

/** How far a sync has read its source. */
export interface SyncProgress {
  pages: number;
  records: number;
}

/**
 * The first page of the source, mapped (CONTRACT.md: a preview reads the first page only and stores
 * nothing): its first PREVIEW_ITEMS items, its record count and its mapping errors. A Merchant, CSV or
 * TSV document is one page: it is read whole, as it streams in.
 */
export async function previewFeed(
  feed: FeedConfig,
  network: FeedNetwork,
  stop?: AbortSignal,
): Promise<PreviewResult> {
  const mapper = compileMapping(feed);
  const result: PreviewResult = { items: [], total: 0, errors: [] };
  for await (const page of fetchPages(feed, network, { stop, maxPages: 1 })) {
    const first = result.total;
    result.total += page.records.length;
    page.records.forEach((record, index) => {
      const outcome = mapper(record, first + index);
      if (!outcome.ok) {
        if (result.errors.length < MAX_REPORTED_ERRORS) result.errors.push(outcome.error);
      } else if (result.items.length < PREVIEW_ITEMS) result.items.push(previewItem(outcome.item));
    });
  }
  return result;
}

/**
 * Reads the whole source into a staging table, page by page, then applies it to the tenant's items in
 * one transaction (see FeedStaging). The next page is fetched while the last one is mapped and staged.
 * Any failure before the apply (a page that fails, times out or is not JSON; `stop`) changes nothing.
 * `changed` gets the items the apply changed, as committed, before any later write.
 */
export async function syncFeedIntoStore(
  feed: FeedConfig,
  network: FeedNetwork,
  store: Store,
  tenantId: string,
  changed: (items: CatalogItem[]) => void,
  progressed: (progress: SyncProgress) => void,
  stop: AbortSignal,
): Promise<SyncResult> {
  const startedAt = new Date().toISOString();
  const mapper = compileMapping(feed);
  const errors: RecordError[] = [];
  // Ends the fetch of a page read ahead when staging fails.
  const abandon = new AbortController();
  const pages = fetchPages(feed, network, { stop: AbortSignal.any([stop, abandon.signal]) });
  const staging = await FeedStaging.create(store);
  try {
    let index = 0;
    let next = pages.next();
    for (;;) {
      const step: IteratorResult<FetchedPage> = await next;
      if (step.done) break;
      next = pages.next();
      next.catch(() => undefined);
      const staged: StagedRecord[] = [];
      for (const record of step.value.records) {
        const outcome = mapper(record, index++);
        if (outcome.ok) staged.push({ mapped: true, item: outcome.item });
        else {
          if (errors.length < MAX_REPORTED_ERRORS) errors.push(outcome.error);
          // Listed but not mappable: the stored item (if any) is left as it is, neither updated nor unavailable.
          if (outcome.externalId !== undefined)
            staged.push({ mapped: false, externalId: outcome.externalId });
        }
      }
      await staging.append(staged);
      progressed({ pages: step.value.number, records: index });
    }
    const applied = await staging.apply(tenantId, changed);
    return { ...applied, errors, startedAt, finishedAt: new Date().toISOString() };
  } catch (error) {
    abandon.abort();
    throw error;
  } finally {
    await staging.drop();
  }
}
