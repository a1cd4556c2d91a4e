import { z } from 'zod';
import { NON_EMPTY_ID } from './common.js';
import { expression } from './expressions.js';

/** The item `GET` and `DELETE /catalog/items/:externalId` name (docs/guide.md, "Deleting items"). */
export const ITEM_PARAMS = z.strictObject({ externalId: NON_EMPTY_ID });

/** What a bulk update sets on every item its filter matches: attributes merge key by key, null removes. */
export const BULK_UPDATE_SET = z.strictObject({
  available: z.boolean().optional(),
  category: z.string().max(512).nullable().optional(),
  attributes: z.record(z.string(), z.unknown()).optional(),
});
export type BulkUpdateSet = z.infer<typeof BULK_UPDATE_SET>;

export const BULK_UPDATE_BODY = z.strictObject({ filter: expression('filter'), set: BULK_UPDATE_SET });
export type BulkUpdateBody = z.infer<typeof BULK_UPDATE_BODY>;

export const BULK_DELETE_BODY = z.strictObject({ filter: expression('filter') });
export type BulkDeleteBody = z.infer<typeof BULK_DELETE_BODY>;

export const BULK_UPDATED = z.object({ updated: z.number().int() });
export const BULK_DELETED = z.object({ deleted: z.number().int() });
