/**
 * The thread where the daemon's loader opens, checks and maps model versions (README, "Batch models"), so
 * that a swap costs the event-loop thread and the ranking thread an assignment, not the seconds of
 * reading, hashing and mapping millions of entries. Arrays come back in shared memory: neither this
 * message nor the state change that carries the model on to the ranking thread copies them.
 */
import { parentPort } from 'node:worker_threads';
import { sharedMemoryOf } from '../artifacts/columns.js';
import { prepareModel, type PreparedModel } from './prepared-model.js';
import type { LoadRequest, LoadAnswer } from './model-loader.js';

function inSharedMemory(prepared: PreparedModel): PreparedModel {
  // Vectors are decoded into shared memory already (they are the largest model).
  if ('vectors' in prepared) return prepared;
  if ('factors' in prepared) {
    const { itemFactors, known, itemGram } = prepared.factors;
    const factors = {
      ...prepared.factors,
      itemFactors: sharedMemoryOf(itemFactors),
      known: sharedMemoryOf(known),
    };
    return { ...prepared, factors: { ...factors, itemGram: sharedMemoryOf(itemGram) } };
  }
  const { offsets, neighbours, weights, compact } = prepared.neighbours;
  return {
    ...prepared,
    neighbours: {
      ...prepared.neighbours,
      offsets: sharedMemoryOf(offsets),
      neighbours: sharedMemoryOf(neighbours),
      weights: sharedMemoryOf(weights),
      compact: compact && {
        local: sharedMemoryOf(compact.local),
        members: sharedMemoryOf(compact.members),
        localOf: sharedMemoryOf(compact.localOf),
      },
    },
  };
}

parentPort!.on('message', (request: LoadRequest) => {
  let answer: LoadAnswer;
  try {
    const ids = new Map(request.externalIds.map((externalId, id) => [externalId, id]));
    const catalog = {
      size: request.externalIds.length,
      idOf: (externalId: string) => ids.get(externalId) ?? -1,
    };
    const prepared = prepareModel(request.dataDir, request.tenantId, request.model, request.version, catalog);
    answer = { id: request.id, prepared: inSharedMemory(prepared) };
  } catch (error) {
    answer = { id: request.id, failure: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
