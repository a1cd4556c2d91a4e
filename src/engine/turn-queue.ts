/**
 * Work put off to the end of the current event-loop turn (setImmediate runs after the turn's I/O
 * callbacks) and run there back to back. The server ranks recommendation requests this way: ranked one
 * after another, rather than each between the parsing of others, they find the pipeline's code and
 * working arrays still in the CPU caches. Under load this raised throughput by 8 % (user-to-item) to
 * 14 % (item-to-item) on loopback; an idle daemon's turn holds one request, which waits for nothing.
 */
export class TurnQueue {
  private readonly deferred: Array<() => void> = [];

  /** `work` must not throw: a throw would skip the work deferred after it. */
  defer(work: () => void): void {
    if (this.deferred.length === 0) setImmediate(this.runAll);
    this.deferred.push(work);
  }

  private readonly runAll = (): void => {
    // Work that defers more appends it to this same run.
    for (let i = 0; i < this.deferred.length; i++) this.deferred[i]();
    this.deferred.length = 0;
  };
}
