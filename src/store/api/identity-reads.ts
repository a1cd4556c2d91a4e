import type { StoredImpression, StoredInteraction, StoredUser } from '../rows.js';

// The identity area's reads, apart from its operations (identity.ts): they name the stored rows
// (rows.ts), whose RowBuffer carries every area's operations (ops.ts), and one file would close a circle.

/** One row of the merge ledger. */
export interface MergeRecord {
  userId: string;
  sessionId: string;
  eventsCopied: number;
  /** Epoch milliseconds. */
  mergedAt: number;
}

/** What the store holds of a user and of the sessions merged into it (CONTRACT.md, "Integrator features"). */
export interface UserData {
  /** The user row, if there is one. */
  user: StoredUser | null;
  /**
   * Their interactions in commit order, each event once: a session's event that a merge copied to the
   * user is listed as the copy (the user's, with the session id it came from), not again as the
   * session's; a copy made for another user is that user's, and not listed. Revenue fields are numbers
   * or null.
   */
  interactions: StoredInteraction[];
  /** Their impressions in commit order. */
  impressions: StoredImpression[];
  /** The merge ledger's rows naming one of them as user or as session, by merge time then session. */
  merges: MergeRecord[];
}

/** What the daemon reads of identities' rows: for identity merges, and a user's export and erasure. */
export interface IdentityReads {
  /**
   * The committed interactions whose identity (userId, else sessionId) is one of the sessions, in commit
   * order, as a merge copies them: `sessionId` is that identity, and they carry no event id, user id,
   * answer id nor time of receipt of their own (`receivedAt` 0).
   */
  sessionEvents(tenantId: string, sessionIds: readonly string[]): Promise<StoredInteraction[]>;
  /** The event ids of the interactions that name one of the identities as user or as session. */
  interactionEventIds(tenantId: string, identities: readonly string[]): Promise<string[]>;
  /** The data of the user and of the sessions merged into it. */
  userData(tenantId: string, userId: string, mergedSessions: readonly string[]): Promise<UserData>;
}
