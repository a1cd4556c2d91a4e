/**
 * The thread where the daemon's loader opens, checks and maps model versions (README, "Batch models"), so
 * that a swap costs the event-loop thread and the ranking thread an assignment, not the seconds of
 * reading, hashing and mapping millions of entries. `prepareModel` writes the arrays in shared memory:
 * neither this message nor the state change that carries the model on to the ranking thread copies them.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { prepareModel } from './prepared-model.js';
import { BUILD_NICENESS } from './build-launcher.js';
import type { LoadRequest, LoadAnswer } from './model-loader.js';

// The builds' niceness (README, "Batch models"): a load takes the CPU that the event loop and the ranking
// thread leave. Linux keeps a niceness per thread, so this sets this thread's alone; elsewhere it would
// set the whole daemon's, and is not done.
if (process.platform === 'linux') {
  try {
    setPriority(BUILD_NICENESS);
  } catch {
    // Not permitted here: the thread loads at the daemon's priority.
  }
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
    answer = { id: request.id, prepared };
  } catch (error) {
    answer = { id: request.id, failure: (error as Error).message };
  }
  parentPort!.postMessage(answer);
});
