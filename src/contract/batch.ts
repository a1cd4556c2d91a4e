import { z } from 'zod';

/** Requests one batch may carry (docs/guide.md, "Batches"). */
export const MAX_BATCH_REQUESTS = 1000;

const SCALAR = z.union([z.string(), z.number(), z.boolean()]);

/** One request of a batch: what it would have sent alone, but for the headers, which are the batch's. */
export const BATCH_REQUEST = z.strictObject({
  method: z.enum(['GET', 'POST', 'PUT', 'DELETE']),
  path: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^\/[^#]*$/, 'a path starts with /'),
  /** Query parameters, added to any query string the path has. */
  query: z.record(z.string(), z.union([SCALAR, z.array(SCALAR)])).optional(),
  body: z.unknown().optional(),
});
export type BatchRequest = z.infer<typeof BATCH_REQUEST>;

/** Body of `POST /batch`. */
export const BATCH_BODY = z.strictObject({
  requests: z.array(BATCH_REQUEST).min(1).max(MAX_BATCH_REQUESTS),
  distinctRecomms: z.boolean().optional(),
});
export type BatchBody = z.infer<typeof BATCH_BODY>;
