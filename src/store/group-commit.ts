import { RowBuffer } from './rows.js';

/**
 * A write as a store's write queue runs it at flush time: it adds its rows to the flush's buffer and
 * returns what to do once they are committed (update the serving state, compute the answer). Writes run
 * after the writes queued before them, so read-modify-writes (item deltas) see each other through the
 * flush's scratch space.
 */
export type Write<T> = (rows: RowBuffer, scratch: Map<string, unknown>) => () => T;

/** A queued write and how to answer it. */
export interface PendingWrite {
  write: Write<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit, as both stores' write queues do it (docs/guide.md, "Ingestion"): the writes of `batch`
 * build one RowBuffer, `commit` stores it in one transaction (or one append to a log), and each write's
 * apply step runs, in order, only once that succeeded. A batch that fails is tried again write by write,
 * so that one bad write does not fail its neighbours.
 */
export async function commitWrites(
  batch: readonly PendingWrite[],
  commit: (rows: RowBuffer, writes: number) => Promise<void>,
): Promise<void> {
  const rows = new RowBuffer();
  const scratch = new Map<string, unknown>();
  let appliers: (() => unknown)[];
  try {
    appliers = batch.map((p) => p.write(rows, scratch));
    await commit(rows, batch.length);
  } catch (error) {
    if (batch.length === 1) batch[0].reject(error);
    else for (const p of batch) await commitWrites([p], commit);
    return;
  }
  batch.forEach((p, i) => {
    try {
      p.resolve(appliers[i]());
    } catch (error) {
      p.reject(error);
    }
  });
}
