import { Worker } from 'node:worker_threads';

/**
 * Worker threads that share one `workerData` and are given a task each, all at once: `run` resolves when
 * every thread has answered its task, and rejects, from then on, once any thread failed or exited. Each
 * thread's module answers a task message with one message of its own when the task is done.
 */
export class ThreadGang<Task> {
  private readonly workers: Worker[] = [];
  private waiting = 0;
  private pending: { resolve: () => void; reject: (error: Error) => void } | undefined;
  private failure: Error | undefined;
  private closing = false;

  /** `label` names the threads in the error of one that exits, such as "an ALS thread". */
  constructor(script: URL, workerData: unknown, count: number, label: string) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(script, { workerData });
      worker.on('message', () => {
        if (--this.waiting > 0) return;
        const pending = this.pending;
        this.pending = undefined;
        pending?.resolve();
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (!this.closing) this.fail(new Error(`${label} exited (code ${code})`));
      });
      this.workers.push(worker);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** Gives thread `i` the task `taskOf(i)` and waits for every thread's answer. */
  run(taskOf: (thread: number) => Task): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.waiting = this.workers.length;
      this.workers.forEach((worker, i) => worker.postMessage(taskOf(i)));
    });
  }

  private fail(error: Error): void {
    this.failure ??= error;
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(this.failure);
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

export function positiveInteger(value: number, name: string): void {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, not ${value}`);
}
