import { eraseFromArtifacts, type ErasedIds } from '../artifacts/erase.js';
import { ApiError } from '../contract/errors.js';
import type { Runtime } from '../runtime.js';
import { isDiskFull } from '../store/disk-full.js';

/** How one deletion's ids leave what the store's commit did not reach. */
export interface Erasure {
  /** Removes them from the answer record (and what the answers keep of them). */
  purgeAnswers: () => Promise<unknown>;
  /** Rewrites the lake's files that name them. */
  eraseLake: () => Promise<unknown>;
  /** The ids no kept model version may name any more. */
  erased: ErasedIds;
  /** The 507 INSUFFICIENT_STORAGE message when the data dir's disk fills up on the way. */
  diskFull: string;
}

/**
 * The tail of a deletion once its rows are committed: the answer record, the lake, every kept model
 * version (docs/batch-models.md, "Deleted ids") and the store file, in that order; a full disk answers 507
 * INSUFFICIENT_STORAGE, since the deletion committed and the answer must not say that nothing was done.
 * The tenant's models are built again without the ids in every case.
 */
export async function finishErasure(runtime: Runtime, tenantId: string, erasure: Erasure): Promise<void> {
  try {
    await erasure.purgeAnswers();
    await erasure.eraseLake();
    eraseFromArtifacts(runtime.dataDir, tenantId, erasure.erased);
    await runtime.store.scrub();
  } catch (error) {
    if (!isDiskFull(error)) throw error;
    throw new ApiError('INSUFFICIENT_STORAGE', erasure.diskFull);
  } finally {
    runtime.models.rebuild(tenantId);
  }
}
