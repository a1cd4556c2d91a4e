/**
 * A thread of buildEase: runs each task it is told on its rows of the matrix it shares with the other
 * threads, and answers once they are written.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runTask, type SweepShared, type SweepTask } from './ease.js';

const shared = workerData as SweepShared;

// An error ends the thread; buildEase hears of it from the Worker's 'error' event.
parentPort!.on('message', (task: SweepTask) => {
  runTask(shared, task);
  parentPort!.postMessage(null);
});
