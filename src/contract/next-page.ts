import { z } from 'zod';

/** Body of `POST /recommendations/next` (docs/guide.md, "The next page"). */
export const NEXT_PAGE_BODY = z.strictObject({
  recommId: z.string().min(1).max(256),
  count: z.number().int().min(1).max(100),
});
export type NextPageBody = z.infer<typeof NEXT_PAGE_BODY>;
