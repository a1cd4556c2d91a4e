import type { ConfigOp } from './config.js';
import type { IdentityOp } from './identity.js';
import type { LoadReads } from './load.js';
import type { StoredCredential, TenantOp, TenantReads } from './tenants.js';
import type { CatalogItem } from '../row-mapping.js';
import type { StoredInteraction, StoredUser } from '../rows.js';

/** The merge ledger's operation, which names no deleted identity (a deletion removes it from the log). */
export type RecordMerge = Extract<IdentityOp, { op: 'recordMerge' }>;

/**
 * What one committed write changed of a tenant's rows, as daemons sharing a store follow each other's
 * writes (docs/architecture.md, "The store"). A change names what changed, not how it is now: a follower
 * reads it back (ChangeReads) and so takes what is committed now, whatever order changes reach it in.
 */
export type StoreChange =
  /** Items upserted. */
  | { kind: 'items'; tenantId: string; itemIds: string[] }
  /** Users upserted. */
  | { kind: 'users'; tenantId: string; userIds: string[] }
  /** Interactions stored with seq numbers `first` to `last` (an event id already held took none). */
  | { kind: 'interactions'; tenantId: string; first: number; last: number }
  | { kind: 'impressions'; tenantId: string; first: number; last: number }
  /** One of the write's typed operations, as the write gave it (src/store/api/ops.ts), but erasures. */
  | { kind: 'op'; tenantId: string; op: ConfigOp | TenantOp | RecordMerge }
  /**
   * Identities deleted (a user and the sessions merged into it), named by the hash of each
   * (identityHash): the log keeps nothing that names them once their rows are gone (docs/guide.md,
   * "Identity"), and a follower finds them among those it holds.
   */
  | { kind: 'identities-forgotten'; tenantId: string; hashes: string[] }
  /**
   * Items removed (CatalogStore.removeItems), by the hash of each id (identityHash), with the event ids
   * of the events that went with them.
   */
  | {
      kind: 'item-removals';
      tenantId: string;
      hashes: string[];
      interactionEventIds: string[];
      impressionEventIds: string[];
    }
  /** A feed sync's apply (FeedStaging.apply): the items it changed carry `updatedAt`. */
  | { kind: 'feed-apply'; tenantId: string; updatedAt: number }
  /** A change a later deletion emptied, since it named what was deleted: nothing to apply. */
  | { kind: 'erased'; tenantId: string };

/** How far a follower is: each tenant's last change applied (its number in the tenant's log). */
export type ChangePosition = Map<string, number>;

/** What loading the serving state reads, all of one snapshot, and the position of the log in it. */
export interface ChangeSnapshot {
  readonly tenants: TenantReads;
  readonly load: LoadReads;
  /** Every change committed before the snapshot, and none after. */
  readonly position: ChangePosition;
  /** Ends the snapshot (once the load is done). */
  release(): Promise<void>;
}

/** Reads of what a change names, as committed now. */
export interface ChangeReads {
  /** The items of those ids the tenant holds, in the catalog's form. */
  items(tenantId: string, itemIds: readonly string[]): Promise<CatalogItem[]>;
  users(tenantId: string, userIds: readonly string[]): Promise<StoredUser[]>;
  /** The tenant's interactions numbered `first` to `last`, in seq order. */
  interactions(tenantId: string, first: number, last: number): Promise<StoredInteraction[]>;
  /** The event ids of the tenant's impressions numbered `first` to `last`. */
  impressionEventIds(tenantId: string, first: number, last: number): Promise<string[]>;
  /** The items a feed sync's apply left with `updatedAt`, in chunks. */
  itemsUpdatedAt(tenantId: string, updatedAt: number): AsyncIterable<CatalogItem[]>;
  /** The tenant's configuration document of the kind and key; undefined when there is none. */
  document(tenantId: string, kind: string, key: string): Promise<unknown>;
  /** Whether the tenant exists. */
  tenant(tenantId: string): Promise<boolean>;
  credentials(tenantId: string): Promise<StoredCredential[]>;
  /** Whether the merge ledger holds the pair. */
  merged(tenantId: string, userId: string, sessionId: string): Promise<boolean>;
}

/**
 * The changes other daemons commit to a shared store, for this one to follow (absent where one process
 * owns the store). Changes of one tenant come in the order they committed; this daemon's own are passed
 * over, its writes' apply steps having applied them.
 */
export interface ChangeFeed {
  readonly reads: ChangeReads;
  /** Reads for loading the serving state, of one snapshot, with the log's position in it. */
  snapshot(): Promise<ChangeSnapshot>;
  /**
   * Hands `apply` the changes after `from`, each tenant's one at a time in order, and the later ones as
   * they commit. A change counts as applied once `apply` resolved for it; one that failed (`failed` is
   * told) is handed again a moment later, so `apply` changes nothing before what can fail (its reads)
   * is done.
   */
  follow(
    from: ChangePosition,
    apply: (change: StoreChange) => Promise<void>,
    failed: (error: unknown) => void,
  ): void;
  /** Resolves once every change committed before the call was applied. */
  caughtUp(): Promise<void>;
  /** Stops following, once the change being applied is done (closing the store stops it too). */
  stop(): Promise<void>;
}
