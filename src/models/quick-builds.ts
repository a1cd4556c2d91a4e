import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ModelName } from '../artifacts/layout.js';
import type { QuickBuildReply, QuickBuildRequest } from '../artifacts/quick-build-messages.js';
import { aborted } from './build-launcher.js';
import type { BuildRunner } from './model-scheduler.js';

const QUICK_BUILD_SCRIPT = new URL('../../jobs/quick-build-process.js', import.meta.url);

/** How long the process waits for another build before it ends, giving its memory back. */
const IDLE_MS = 60_000;

interface Waiting {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * Runs small tenants' builds in one process kept for them (jobs/quick-build-process.ts), started with the
 * first build and again after it ended (idle for IDLE_MS, or failed). An abort of a build's signal (the
 * daemon stops) ends the process, and the build with it.
 *
 * The process runs at the daemon's own priority, on any CPU (docs/batch-models.md): a small tenant's
 * new interactions show in its co-occurrence within 5 s (CONTRACT, "Freshness of effects"), which the
 * larger builds' idle priority cannot promise on a machine busy with anything else, and its build takes
 * under a tenth of a CPU second.
 */
export function quickBuildRunner(
  dataDir: string,
  modelDir?: string,
  script: URL = QUICK_BUILD_SCRIPT,
  idleMs = IDLE_MS,
): BuildRunner {
  const builds = new QuickBuilds(dataDir, modelDir, script, idleMs);
  const run: BuildRunner = (tenantId, models, signal) => builds.run(tenantId, models, signal);
  return Object.assign(run, { close: () => builds.close() });
}

class QuickBuilds {
  private child: ChildProcess | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private next = 0;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly dataDir: string,
    private readonly modelDir: string | undefined,
    private readonly script: URL,
    private readonly idleMs: number,
  ) {}

  run(tenantId: string, models: readonly ModelName[], signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(aborted());
    clearTimeout(this.idle);
    const child = (this.child ??= this.start());
    const id = this.next++;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => this.lost(child, aborted());
      signal.addEventListener('abort', onAbort, { once: true });
      const settled = () => signal.removeEventListener('abort', onAbort);
      this.waiting.set(id, {
        resolve: () => (settled(), resolve()),
        reject: (error) => (settled(), reject(error)),
      });
      const request: QuickBuildRequest = { id, tenantId, models: [...models] };
      child.send(request, (error) => {
        if (error) this.lost(child, error);
      });
    });
  }

  close(): void {
    clearTimeout(this.idle);
    if (this.child) this.lost(this.child, new Error('the quick build process was closed'));
  }

  private start(): ChildProcess {
    // The embedding model is the daemon's, so that vectors it built compare with the daemon's.
    const env = this.modelDir ? { ...process.env, NEXTREC_MODEL_DIR: this.modelDir } : process.env;
    const child = fork(fileURLToPath(this.script), [this.dataDir], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: [],
      env,
    });
    // Neither the process nor its channel keeps the daemon running.
    child.unref();
    child.channel?.unref();
    child.on('message', (reply: QuickBuildReply) => this.answer(child, reply));
    child.on('error', (error) => this.lost(child, error));
    child.once('exit', (code, signal) =>
      this.lost(child, new Error(`the quick build process ended (${signal ?? `code ${code}`})`)),
    );
    return child;
  }

  private answer(child: ChildProcess, reply: QuickBuildReply): void {
    const waiting = this.waiting.get(reply.id);
    if (!waiting) return;
    this.waiting.delete(reply.id);
    if ('failure' in reply) waiting.reject(new Error(reply.failure));
    else waiting.resolve();
    if (this.waiting.size === 0) this.endWhenIdle(child);
  }

  private endWhenIdle(child: ChildProcess): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.child === child && this.waiting.size === 0) this.lost(child, new Error('idle'));
    }, this.idleMs);
    this.idle.unref();
  }

  /** The process ended or is given up: what waits on it fails, and the next build starts another. */
  private lost(child: ChildProcess, error: Error): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (child.connected) child.disconnect();
    child.kill();
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}
