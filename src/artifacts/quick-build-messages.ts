import type { ModelName } from './layout.js';

/**
 * What the daemon asks of the process it keeps for small tenants' builds (jobs/quick-build-process.ts):
 * one tenant's models, built from its lake and published as `nextrec build` would.
 */
export interface QuickBuildRequest {
  id: number;
  tenantId: string;
  models: ModelName[];
}

/** How a request ended: the versions published, or why none was. */
export type QuickBuildReply = { id: number; versions: number[] } | { id: number; failure: string };
