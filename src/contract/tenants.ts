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

/** Requests per minute per credential kind; absent or null: unlimited (docs/guide.md, "Rate limits"). */
const PER_MINUTE = z.number().int().min(1).max(10_000_000).nullable().optional();
export const RATE_LIMITS = z.strictObject({
  api: PER_MINUTE,
  private: PER_MINUTE,
  public: PER_MINUTE,
  jwt: PER_MINUTE,
});
export type RateLimitSettings = z.infer<typeof RATE_LIMITS>;
