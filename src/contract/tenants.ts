import { z } from 'zod';
import { TENANT_ID } from './common.js';

export const CREATE_TENANT_BODY = z.strictObject({ tenantId: TENANT_ID });

export const TENANT_CREDENTIALS = z.object({
  tenantId: z.string(),
  apiKey: z.string(),
  privateToken: z.string(),
  publicToken: z.string(),
});
export type TenantCredentials = z.infer<typeof TENANT_CREDENTIALS>;

export const TENANT_LIST = z.object({ tenants: z.array(z.string()) });
