/** Runs async work one piece at a time, in the order given; a piece that failed does not stop the next. */
export class OneAtATime {
  private last: Promise<unknown> = Promise.resolve();

  /** Runs `work` once everything given before it has ended; settles as `work` does. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const run = this.last.then(work);
    this.last = run.catch(() => undefined);
    return run;
  }

  /** Resolves once everything given so far has ended (failed or not). */
  ended(): Promise<unknown> {
    return this.last;
  }
}

/**
 * One OneAtATime per key: work of one key runs one piece at a time, in the order given, beside the work
 * of other keys. A key's line is forgotten once it has nothing left to run.
 */
export class OneAtATimePerKey {
  private readonly lines = new Map<string, { line: OneAtATime; pending: number }>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let entry = this.lines.get(key);
    if (!entry) this.lines.set(key, (entry = { line: new OneAtATime(), pending: 0 }));
    const current = entry;
    current.pending++;
    return current.line.run(work).finally(() => {
      if (--current.pending === 0 && this.lines.get(key) === current) this.lines.delete(key);
    });
  }

  /** Resolves once everything given so far has ended (failed or not). */
  async ended(): Promise<void> {
    await Promise.all([...this.lines.values()].map(({ line }) => line.ended()));
  }
}
