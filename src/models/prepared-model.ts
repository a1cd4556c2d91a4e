import { MODEL_FORMATS, decodeItemVectors } from '../artifacts/formats.js';
import type { ModelName } from '../artifacts/layout.js';
import type { Manifest } from '../artifacts/manifest.js';
import { openVersion } from '../artifacts/open.js';
import {
  factorArrays,
  itemNeighboursOf,
  neighbourArrays,
  servingFactorsOf,
  type FactorArrays,
  type NeighbourArrays,
} from '../state/state-changes.js';
import type { TenantState } from '../state/tenant-state.js';
import { servingFactors, type CatalogIds } from '../state/factor-model.js';
import { servingNeighbours } from './neighbours-artifact.js';
import type { VectorBase } from '../vector/tenant-vectors.js';

/** A version checked and mapped into the serving state's dense ids, as plain data a thread can send. */
export type PreparedModel =
  | { manifest: Manifest; neighbours: NeighbourArrays }
  | { manifest: Manifest; factors: FactorArrays }
  | { manifest: Manifest; vectors: VectorBase };

/**
 * Opens a version of a tenant's model, checks it and maps it into the catalog's dense ids. Throws when
 * the artifact is missing, incomplete, corrupt or inconsistent. Touches no serving state, so it can run
 * in a thread of its own (see model-load-worker.ts) with the catalog's ids copied there; its arrays are
 * in shared memory, so that thread hands them on without a copy.
 */
export function prepareModel(
  dataDir: string,
  tenantId: string,
  model: ModelName,
  version: number,
  catalog: CatalogIds,
): PreparedModel {
  const artifact = openVersion(dataDir, tenantId, model, version);
  const { manifest } = artifact;
  const builtAt = Date.parse(manifest.builtAt);
  const interactions = manifest.source.interactions;
  if (model === 'factors') {
    const factors = MODEL_FORMATS.factors.decode(artifact);
    return {
      manifest,
      factors: factorArrays(servingFactors(factors, catalog, manifest.parameters, interactions, builtAt)),
    };
  }
  if (model === 'vectors') {
    // Rows searched through HNSW stay in their file (docs/memory.md).
    const vectors = decodeItemVectors(artifact, 'file');
    const base: VectorBase = {
      version,
      builtAt,
      model: vectors.model,
      externalIds: vectors.items,
      hashes: vectors.hashes,
      matrix: vectors.matrix,
      ...(vectors.matrixFile !== undefined && { matrixFile: vectors.matrixFile }),
      indexFiles: vectors.indexes as VectorBase['indexFiles'],
      lists: vectors.lists,
    };
    return { manifest, vectors: base };
  }
  const lists = MODEL_FORMATS[model].decode(artifact);
  return { manifest, neighbours: neighbourArrays(servingNeighbours(lists, catalog, interactions, builtAt)) };
}

/** Puts a prepared model in the tenant's serving state (and so in the ranking thread's replica). */
export function installModel(tenant: TenantState, model: ModelName, prepared: PreparedModel): void {
  if ('vectors' in prepared) tenant.replaceVectorBase(prepared.vectors);
  else if ('factors' in prepared) tenant.replaceFactors(servingFactorsOf(prepared.factors));
  else tenant.replaceNeighbours(itemNeighboursOf(prepared.neighbours), model as 'cooccurrence' | 'ease');
}
