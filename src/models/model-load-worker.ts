/**
 * The thread where the daemon's loader opens, checks and maps model versions (docs/batch-models.md), so
 * that a swap costs the event-loop thread and the ranking thread an assignment, not the seconds of
 * reading, hashing and mapping millions of entries. This module sets the thread up as a build is set up,
 * and only then imports the loading code (model-load-handler.ts), whose compiling is the thread's first
 * work: the builds' niceness, and their CPUs when they keep off one (the daemon is told this thread's id).
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { BUILD_NICENESS } from './build-launcher.js';
import type { LoadingThreadStarted } from './model-loader.js';

// Linux keeps a niceness per thread, so this sets this thread's alone; elsewhere it would set the whole
// daemon's, and is not done.
if (process.platform === 'linux') {
  try {
    setPriority(BUILD_NICENESS);
  } catch {
    // Not permitted here: the thread loads at the daemon's priority.
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
