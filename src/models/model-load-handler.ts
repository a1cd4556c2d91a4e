/**
 * What the model loading thread (model-load-worker.ts) does with each version it is asked for.
 * `prepareModel` writes the arrays in shared memory: neither this message nor the state change that
 * carries the model on to the ranking thread copies them.
 */
import { parentPort } from 'node:worker_threads';
import { prepareModel } from './prepared-model.js';
import type { LoadRequest, LoadAnswer } from './model-loader.js';

parentPort!.on('message', (request: LoadRequest) => {
  let answer: LoadAnswer;
  try {
    const ids = new Map(request.externalIds.map((externalId, id) => [externalId, id]));
    const catalog = {
      size: request.externalIds.length,
      idOf: (externalId: string) => ids.get(externalId) ?? -1,
    };
    const prepared = prepareModel(request.dataDir, request.tenantId, request.model, request.version, catalog);
    answer = { id: request.id, prepared };
  } catch (error) {
    answer = { id: request.id, failure: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
