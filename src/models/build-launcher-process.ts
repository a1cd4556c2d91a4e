/**
 * The process that starts the daemon's build processes (docs/batch-models.md). Starting a process
 * copies the page tables of the one that starts it: from a daemon holding 500 MB that stops its event
 * loop for 20 to 30 ms, and its other threads too, each time a build begins. This process is small, so
 * starting a build here costs the daemon only a message. It imports nothing but Node's own modules.
 *
 * It runs at the niceness it is given (its first argument), which every build it starts inherits, each
 * of the build's threads included; and, when its second argument asks (SPARE_CPU) on Linux with several
 * CPUs, on all of them but one and under SCHED_IDLE, which the builds inherit too (see leaveServingACpu),
 * and where it puts the daemon's threads it is asked to (its model loading thread: keepThread). It ends
 * when the daemon does (its channel closes), and ends the builds it started with it; the signals that
 * stop the daemon do not end it before that.
 *
 * Each build gets a temporary folder of its own (its `TMPDIR`: DuckDB spills there), which this process
 * removes when the build has ended, however it ended: a build ended by a signal, or killed for its
 * memory, removes nothing itself.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { setPriority, tmpdir } from 'node:os';
import path from 'node:path';
import type { LauncherReply, LauncherRequest, SPARE_CPU } from './build-launcher.js';

/** The prefix of each build's temporary folder, in the machine's. */
const BUILD_TEMP_PREFIX = 'nextrec-build-';
/** How long an ending launcher waits for the builds it ended before it ends anyway. */
const BUILDS_END_MS = 10_000;

const running = new Map<number, ChildProcess>();
/** The CPUs this process keeps to (a CPU list), when it keeps off one. */
let buildCpus: string | undefined;

try {
  setPriority(Number(process.argv[2]));
} catch {
  // Not permitted here: the builds run at the daemon's priority.
}
// The value of SPARE_CPU, written out: this process imports nothing but Node's own modules.
if (process.argv[3] === ('spare-cpu' satisfies typeof SPARE_CPU)) leaveServingACpu();

/**
 * Keeps this process, and so every build it starts, off the first of the CPUs it may run on, when it may
 * run on several, and under SCHED_IDLE there (docs/batch-models.md; see keepOn). The lowest priority
 * gives serving the CPU time it asks for, but not the caches a build flushes between its requests: on 2
 * cores at 1,000 recommendations a second, requests over 5 ms went from 14 a second before the build to
 * 41 while co-occurrence and EASE built on both cores; with the builds on one, 16 against 17 before
 * (bench/latency's shop). Builds take longer.
 */
function leaveServingACpu(): void {
  if (process.platform !== 'linux') return;
  let allowed: number[];
  try {
    const line = /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (!line) return;
    allowed = cpuList(line[1]);
  } catch {
    return;
  }
  if (allowed.length < 2) return;
  const builds = allowed.slice(1).join(',');
  if (keepOn(builds, process.pid, true)) buildCpus = builds;
}

/**
 * Puts a process's threads (`allTasks`), or one thread, on `cpus` and then under SCHED_IDLE; false when
 * it could not be put on them (no taskset, from util-linux), and it may run on every CPU. Without chrt,
 * or where it is not permitted, it keeps its niceness alone. A CPU that runs only SCHED_IDLE threads
 * counts as idle where the kernel places a thread that wakes: a serving thread that wakes while the other
 * CPU is busy takes the builds' CPU at once, where beside a build at niceness 19 it waited for the busy
 * one. Over the 150 s after interactions that made co-occurrence and EASE stale, requests over 5 ms: 20 a
 * second beside the builds at niceness 19, 12 and 7 under SCHED_IDLE (5, 9 and 9 before them, in the
 * same runs; in the last, neither build had ended within the window). Builds take longer.
 */
function keepOn(cpus: string, id: number, allTasks: boolean): boolean {
  const tasks = allTasks ? ['--all-tasks'] : [];
  try {
    execFileSync('taskset', [...tasks, '--cpu-list', '--pid', cpus, String(id)], { stdio: 'ignore' });
  } catch {
    return false;
  }
  try {
    execFileSync('chrt', [...tasks, '--idle', '--pid', '0', String(id)], { stdio: 'ignore' });
  } catch {
    // Its niceness alone.
  }
  return true;
}

/** The CPUs of a Linux CPU list (`0-3,8,10-11`). */
function cpuList(text: string): number[] {
  const cpus: number[] = [];
  for (const part of text.split(',')) {
    const [first, last = first] = part.split('-').map(Number);
    for (let cpu = first; cpu <= last; cpu++) cpus.push(cpu);
  }
  return cpus;
}

function reply(message: LauncherReply): void {
  process.send?.(message);
}

function launch(request: Extract<LauncherRequest, { kind: 'launch' }>): void {
  const { id } = request;
  let temp: string;
  try {
    temp = mkdtempSync(path.join(tmpdir(), BUILD_TEMP_PREFIX));
  } catch (error) {
    reply({ kind: 'failed', id, message: `no temporary folder for the build: ${(error as Error).message}` });
    return;
  }
  const removeTemp = () => rmSync(temp, { recursive: true, force: true });
  const child = spawn(process.execPath, request.args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...request.env, TMPDIR: temp },
  });
  running.set(id, child);
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  child.once('error', (error) => {
    removeTemp();
    running.delete(id);
    reply({ kind: 'failed', id, message: error.message });
  });
  // 'close' rather than 'exit': what the build wrote to stderr has all been read by then.
  child.once('close', (code, signal) => {
    removeTemp();
    if (!running.delete(id)) return;
    reply({ kind: 'ended', id, code, signal, errors });
  });
}

/**
 * Puts a thread of the daemon on this process's CPUs, under SCHED_IDLE, when it keeps off one
 * (BuildLauncher.keepWithBuilds).
 */
function keepThread(tid: number): void {
  // A thread that ended meanwhile runs nowhere: nothing to do.
  if (buildCpus !== undefined) keepOn(buildCpus, tid, false);
}

process.on('message', (request: LauncherRequest) => {
  if (request.kind === 'launch') launch(request);
  else if (request.kind === 'keep-thread') keepThread(request.tid);
  else running.get(request.id)?.kill('SIGTERM');
});

// A stop of the daemon (Ctrl-C, the service manager) signals this process too: it ends with the
// daemon's channel instead, so that the daemon sees its builds end as it stops them.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

// The builds' temporary folders go as each build closes (launch): this process waits for that, within
// BUILDS_END_MS.
process.on('disconnect', () => {
  const children = [...running.values()];
  running.clear();
  const closed = children.map((child) => new Promise((resolve) => child.once('close', resolve)));
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(0), BUILDS_END_MS).unref();
  void Promise.all(closed).then(() => process.exit(0));
});
