import { z } from 'zod';
import { NON_EMPTY_ID } from './common.js';

/** `POST /identity/merge`: the anonymous sessions whose events become the user's. */
export const MERGE_BODY = z.strictObject({
  userId: NON_EMPTY_ID,
  sessionIds: z.array(NON_EMPTY_ID).min(1, 'at least one session id').max(1000, 'at most 1000 session ids'),
});
export type MergeBody = z.infer<typeof MERGE_BODY>;

export const MERGE_RESULT = z.object({ merged: z.number().int(), alreadyMerged: z.boolean() });

export const USER_PARAMS = z.strictObject({ userId: NON_EMPTY_ID });
