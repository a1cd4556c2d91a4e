/**
 * A thread of trainAls: solves the rows of the blocks it is told, in the factor matrices it shares with the
 * other threads, and answers once they are written.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ImplicitRowSolver } from '../../src/linalg/dense.js';
import { solveBlocks, type AlsShared, type AlsTask } from './als.js';

const shared = workerData as AlsShared;
const solver = new ImplicitRowSolver(shared.k);

// An error ends the thread; trainAls hears of it from the Worker's 'error' event.
parentPort!.on('message', ([half, first, end]: AlsTask) => {
  solveBlocks(shared, half, first, end, solver);
  parentPort!.postMessage(null);
});
