import { parentPort } from 'node:worker_threads';
import { sendTraffic, STOP, type TrafficOptions } from './traffic-load.js';

/** Sends the traffic it is sent (traffic-load.ts) and posts what was answered as it goes. */
let stopped = false;
parentPort!.on('message', (message: TrafficOptions | typeof STOP) => {
  if (message === STOP) {
    stopped = true;
    return;
  }
  void sendTraffic(
    message,
    () => stopped,
    (report) => parentPort!.postMessage(report),
  );
});
