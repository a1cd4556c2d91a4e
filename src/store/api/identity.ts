/**
 * Writes of identities (docs/guide.md, "Identity"), in a flush's ops. An identity is a user id or a
 * session id: what an event names as its user, else as its session.
 */
export type IdentityOp =
  | {
      area: 'identity';
      op: 'recordMerge';
      tenantId: string;
      userId: string;
      sessionId: string;
      /** How many of the session's events the merge copied to the user. */
      eventsCopied: number;
      /** Epoch milliseconds. */
      mergedAt: number;
    }
  | {
      /**
       * Removes every row of the identities: users, the interactions that name one as user or as
       * session, the impressions of one, and the merge ledger's rows of one as user or as session.
       */
      area: 'identity';
      op: 'forgetIdentities';
      tenantId: string;
      identities: string[];
    };

/** The merge ledger remembers that the session's events were copied to the user (spec, "Identity merge"). */
export function recordMerge(
  tenantId: string,
  userId: string,
  sessionId: string,
  eventsCopied: number,
  mergedAt: number,
): IdentityOp {
  return { area: 'identity', op: 'recordMerge', tenantId, userId, sessionId, eventsCopied, mergedAt };
}

export function forgetIdentities(tenantId: string, identities: string[]): IdentityOp {
  return { area: 'identity', op: 'forgetIdentities', tenantId, identities };
}
