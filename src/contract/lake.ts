import { z } from 'zod';
import { TENANT_ID } from './common.js';

/** `POST /lake/export` (operator key): export one tenant's new rows to the lake now, or every tenant's. */
/** Optional: without a body (or without `tenantId`), every tenant is exported. */
export const LAKE_EXPORT_BODY = z.strictObject({ tenantId: TENANT_ID.optional() }).optional();

export const LAKE_EXPORT_RESULT = z.object({
  exported: z.array(
    z.object({
      tenantId: z.string(),
      tables: z.array(z.object({ table: z.string(), rows: z.number().int() })),
    }),
  ),
});
export type LakeExportResult = z.infer<typeof LAKE_EXPORT_RESULT>;
