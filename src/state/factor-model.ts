import { sharedMemoryOf } from '../artifacts/columns.js';
import { ArtifactError } from '../artifacts/errors.js';
import type { Factors } from '../artifacts/formats.js';
import { gram } from '../linalg/dense.js';
import { sharedArray } from '../linalg/growable.js';

/** How a catalog names its items by dense id: all that mapping a model into serving arrays needs. */
export interface CatalogIds {
  readonly size: number;
  idOf(externalId: string): number;
}

/**
 * Item factors of an ALS model in the serving state's dense ids (row id of `itemFactors`; `known[id]` is 1
 * where the model has the item), with what folding a user in needs: the items' gram matrix and the
 * model's regularization and alpha. Users are always folded in from their current history, so a user who
 * arrived after the build, or whose history moved since, is scored from what they did.
 */
export class ServingFactors {
  constructor(
    readonly k: number,
    readonly itemFactors: Float32Array,
    readonly known: Uint8Array,
    readonly itemGram: Float64Array,
    readonly regularization: number,
    readonly alpha: number,
    readonly interactionCount: number,
    readonly builtAt: number,
  ) {}

  /** How many dense ids the model covers (later items are unknown to it). */
  get size(): number {
    return this.known.length;
  }
}

export function servingFactors(
  model: Factors,
  catalog: CatalogIds,
  parameters: Record<string, unknown>,
  interactionCount: number,
  builtAt: number,
): ServingFactors {
  const { factors: k } = model;
  const regularization = Number(parameters.regularization);
  const alpha = Number(parameters.alpha);
  if (!(regularization >= 0) || !(alpha >= 0))
    throw new ArtifactError('the manifest gives no regularization and alpha to fold users in with');
  const size = catalog.size;
  // In shared memory, as servingNeighbours writes its lists.
  const itemFactors = sharedArray(Float32Array, size * k);
  const known = sharedArray(Uint8Array, size);
  let found = 0;
  for (let row = 0; row < model.items.length; row++) {
    const id = catalog.idOf(model.items[row]);
    if (id < 0) continue;
    itemFactors.set(model.itemFactors.subarray(row * k, row * k + k), id * k);
    known[id] = 1;
    found++;
  }
  if (found === 0 && model.items.length > 0)
    throw new ArtifactError("none of the model's items is in the tenant's catalog");
  // The gram of the model's own item factors: items unknown here still shaped every user's solve.
  const itemGram = sharedMemoryOf(gram(model.itemFactors, model.items.length, k));
  return new ServingFactors(
    k,
    itemFactors,
    known,
    itemGram,
    regularization,
    alpha,
    interactionCount,
    builtAt,
  );
}
