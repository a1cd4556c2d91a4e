/**
 * A thread where the daemon's loader opens, checks and maps model versions (docs/batch-models.md), so
 * that a swap costs the event-loop thread and the ranking thread an assignment, not the seconds of
 * reading, hashing and mapping millions of entries. The thread for large versions is set up as a build
 * is set up before it imports the loading code (model-load-handler.ts), whose compiling is its first
 * work: the builds' niceness, and their CPUs when they keep off one (the daemon is told its thread id).
 * The thread for small versions runs as the daemon does.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { BUILD_NICENESS } from './build-launcher.js';
import type { LoadingThreadOptions, LoadingThreadStarted } from './model-loader.js';

// Linux keeps a niceness per thread, so this sets this thread's alone; elsewhere it would set the whole
// daemon's, and is not done.
if (process.platform === 'linux') {
  if ((workerData as LoadingThreadOptions).niced) {
    try {
      setPriority(BUILD_NICENESS);
    } catch {
      // Not permitted here: the thread loads at the daemon's priority.
    }
  }
  try {
    // `<pid>/task/<thread id>`
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    parentPort!.postMessage({ tid } satisfies LoadingThreadStarted);
  } catch {
    // No /proc: the thread loads on any CPU.
  }
}

await import('./model-load-handler.js');
