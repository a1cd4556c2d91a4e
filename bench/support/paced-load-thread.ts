import { parentPort } from 'node:worker_threads';
import { sendPaced, STOP, type PacedOptions } from './paced-load.js';

/** Runs each paced load (paced-load.ts) it is sent, one after another, and posts its figures. */
let stopped = false;
parentPort!.on('message', (message: PacedOptions | typeof STOP) => {
  if (message === STOP) {
    stopped = true;
    return;
  }
  stopped = false;
  void sendPaced(message, () => stopped).then((figures) => parentPort!.postMessage(figures));
});
