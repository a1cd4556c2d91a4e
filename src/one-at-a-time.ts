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
