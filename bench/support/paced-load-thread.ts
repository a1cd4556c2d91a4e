import { parentPort } from 'node:worker_threads';
import { sendPaced, type PacedOptions } from './paced-load.js';

/** Runs each paced load (paced-load.ts) it is sent, one after another, and posts its figures. */
parentPort!.on('message', (options: PacedOptions) => {
  void sendPaced(options).then((figures) => parentPort!.postMessage(figures));
});
