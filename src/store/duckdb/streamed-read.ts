import type { DuckDBConnection } from '@duckdb/node-api';
import type { ReadRunner } from './reads.js';

/**
 * What `produce` yields on a read's connection, as an async iterable: the read (its connection, which a
 * scrub waits for) lasts until the caller has taken the last value or stopped taking them. `produce` waits
 * for the caller between two values, so one value (a chunk of rows) at a time is held, as when the caller
 * read the stream itself (docs/memory.md).
 */
export function streamedRead<T>(
  read: ReadRunner,
  produce: (db: DuckDBConnection) => AsyncIterable<T>,
): AsyncIterable<T> {
  return { [Symbol.asyncIterator]: () => handOver(read, produce) };
}

async function* handOver<T>(
  read: ReadRunner,
  produce: (db: DuckDBConnection) => AsyncIterable<T>,
): AsyncGenerator<T, void, undefined> {
  let stopped = false;
  /** Lets `produce` go on to its next value: once the caller asks for it, or has stopped. */
  let resume = (): void => undefined;
  let offered = offer<T>();
  const reading = read(async (db) => {
    for await (const value of produce(db)) {
      const taken = new Promise<void>((resolve) => (resume = resolve));
      offered.settle({ done: false, value });
      await taken;
      if (stopped) return;
    }
  });
  reading.then(
    () => offered.settle({ done: true, value: undefined }),
    (error: unknown) => offered.fail(error),
  );
  try {
    for (;;) {
      const next = await offered.promise;
      if (next.done) return;
      offered = offer<T>();
      yield next.value;
      resume();
    }
  } finally {
    stopped = true;
    resume();
    // The connection is closed before the caller goes on; a failure after it stopped is nobody's.
    await reading.catch(() => undefined);
  }
}

interface Offer<T> {
  promise: Promise<IteratorResult<T, undefined>>;
  settle(result: IteratorResult<T, undefined>): void;
  fail(error: unknown): void;
}

function offer<T>(): Offer<T> {
  let settle!: Offer<T>['settle'];
  let fail!: Offer<T>['fail'];
  const promise = new Promise<IteratorResult<T, undefined>>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  // A failure offered once the caller stopped is awaited by nobody (see `finally` above).
  promise.catch(() => undefined);
  return { promise, settle, fail };
}
