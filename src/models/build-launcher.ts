import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** What the daemon asks of the launcher process (build-launcher-process.ts). */
export type LauncherRequest =
  | { kind: 'launch'; id: number; args: string[]; env: NodeJS.ProcessEnv }
  | { kind: 'stop'; id: number }
  | { kind: 'keep-thread'; tid: number };

/** What the launcher process answers: how a build process ended, or that it could not start. */
export type LauncherReply =
  | { kind: 'ended'; id: number; code: number | null; signal: NodeJS.Signals | null; errors: string }
  | { kind: 'failed'; id: number; message: string };

const LAUNCHER_SCRIPT = new URL('./build-launcher-process.js', import.meta.url);

/** The launcher's second argument when its builds are to keep off one CPU (build-launcher-process.ts). */
export const SPARE_CPU = 'spare-cpu';

/**
 * The niceness of the build processes, and of the daemon's model loading thread (docs/batch-models.md): the lowest CPU priority, so that on a busy machine a build or a load takes only the CPU that
 * serving leaves. On 2 cores, builds at the daemon's own
 * priority made a 500-event batch wait 3 times as long at the median (bench/ingest-latency).
 */
export const BUILD_NICENESS = 19;

interface Waiting {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** An abort's rejection, named as Node names it when a signal ends a process it started. */
export function aborted(): Error {
  return new DOMException('the build was aborted', 'AbortError');
}

/**
 * Starts build processes through a small process of its own (build-launcher-process.ts), so that the
 * daemon never copies its own page tables to start one. The launcher starts with the first build (one
 * such copy, once) and again if it ever ends; it ends with `close` or with the daemon, and the builds it
 * runs with it. It runs at `niceness`, and so does every build it starts.
 */
export class BuildLauncher {
  private launcher: ChildProcess | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;

  /**
   * @param spareCpu the builds keep off one CPU, when there are several (docs/batch-models.md; default:
   *   when there are several)
   */
  constructor(
    private readonly spareCpu = availableParallelism() > 1,
    private readonly niceness = BUILD_NICENESS,
    private readonly script: URL = LAUNCHER_SCRIPT,
  ) {}

  /**
   * Runs `node <args>` with `env`; resolves when it exits with code 0, and otherwise rejects with what it
   * wrote to stderr (or how it ended). An abort of `signal` ends it (SIGTERM) and rejects at once with an
   * AbortError.
   */
  run(args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(aborted());
    const launcher = (this.launcher ??= this.start());
    const id = this.next++;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        if (!this.waiting.delete(id)) return;
        this.send(launcher, { kind: 'stop', id });
        reject(aborted());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const settled = () => signal.removeEventListener('abort', onAbort);
      this.waiting.set(id, {
        resolve: () => (settled(), resolve()),
        reject: (error) => (settled(), reject(error)),
      });
      this.send(launcher, { kind: 'launch', id, args, env });
    });
  }

  private start(): ChildProcess {
    // Without the daemon's own flags (a profiler's, say): the launcher only starts processes.
    const args = this.spareCpu ? [String(this.niceness), SPARE_CPU] : [String(this.niceness)];
    const launcher = fork(this.script, args, {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: [],
    });
    // Neither the process nor its channel keeps the daemon running; it ends when the channel closes.
    launcher.unref();
    launcher.channel?.unref();
    launcher.on('message', (reply: LauncherReply) => this.answer(reply));
    launcher.on('error', (error) => this.lost(launcher, error));
    launcher.once('exit', (code, signal) =>
      this.lost(launcher, new Error(`the build launcher ended (${signal ?? `code ${code}`})`)),
    );
    return launcher;
  }

  /**
   * Puts a thread of this process (its Linux thread id) on the CPUs the builds run on, when they keep off
   * one (docs/batch-models.md): the model loading thread, whose loads disturb serving as builds do.
   */
  keepWithBuilds(tid: number): void {
    if (!this.spareCpu) return;
    this.send((this.launcher ??= this.start()), { kind: 'keep-thread', tid });
  }

  /** Ends the launcher, and the builds it runs (they fail); the next run starts another. */
  close(): void {
    const launcher = this.launcher;
    if (launcher?.connected) launcher.disconnect();
    if (launcher) this.lost(launcher, new Error('the build launcher was closed'));
  }

  /** Sends `request`; a launcher that cannot take it any more is given up, failing what waits on it. */
  private send(launcher: ChildProcess, request: LauncherRequest): void {
    launcher.send(request, (error) => {
      if (error) this.lost(launcher, error);
    });
  }

  /** The launcher ended or cannot be reached: the builds waiting on it fail, and the next run starts another. */
  private lost(launcher: ChildProcess, error: Error): void {
    if (this.launcher !== launcher) return;
    this.launcher = undefined;
    launcher.kill();
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }

  private answer(reply: LauncherReply): void {
    const waiting = this.waiting.get(reply.id);
    if (!waiting) return;
    this.waiting.delete(reply.id);
    if (reply.kind === 'failed') waiting.reject(new Error(reply.message));
    else if (reply.code === 0) waiting.resolve();
    else
      waiting.reject(
        new Error(reply.errors.trim() || `build process ended with ${reply.signal ?? `code ${reply.code}`}`),
      );
  }
}
