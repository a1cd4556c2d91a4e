import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import type { ReadRunner } from '../../../src/store/duckdb/reads.js';
import { streamedRead } from '../../../src/store/duckdb/streamed-read.js';

/** A read runner that says whether its read is still open, as Store.read holds a connection. */
function runner() {
  const reads = { open: 0, opened: 0 };
  const read: ReadRunner = async (query) => {
    reads.open++;
    reads.opened++;
    try {
      return await query({} as DuckDBConnection);
    } finally {
      reads.open--;
    }
  };
  return { read, reads };
}

describe('a streamed read', () => {
  it('hands over every value in order, produced one at a time, and ends its read after the last', async () => {
    const { read, reads } = runner();
    const produced: number[] = [];
    const taken: [number, number[]][] = [];
    const stream = streamedRead(read, async function* () {
      for (const value of [1, 2, 3]) {
        produced.push(value);
        yield value;
      }
    });
    expect(reads.opened).toBe(0);
    for await (const value of stream) taken.push([value, [...produced]]);
    // The producer waits for the caller: when a value is taken, none after it was made yet.
    expect(taken).toEqual([
      [1, [1]],
      [2, [1, 2]],
      [3, [1, 2, 3]],
    ]);
    expect(reads).toEqual({ open: 0, opened: 1 });
  });

  it('ends its read, and the producer, before a caller that stops early goes on', async () => {
    const { read, reads } = runner();
    let closed = false;
    const stream = streamedRead(read, async function* () {
      try {
        for (let value = 0; ; value++) yield value;
      } finally {
        closed = true;
      }
    });
    for await (const value of stream) if (value === 2) break;
    expect(closed).toBe(true);
    expect(reads.open).toBe(0);
  });

  it("gives the producer's failure to the caller", async () => {
    const { read, reads } = runner();
    const stream = streamedRead(read, async function* () {
      yield 1;
      throw new Error('the read failed');
    });
    const taken: number[] = [];
    await expect(
      (async () => {
        for await (const value of stream) taken.push(value);
      })(),
    ).rejects.toThrow('the read failed');
    expect(taken).toEqual([1]);
    expect(reads.open).toBe(0);
  });

  it("ends its read when the caller's own work fails", async () => {
    const { read, reads } = runner();
    const stream = streamedRead(read, async function* () {
      yield 1;
      yield 2;
    });
    await expect(
      (async () => {
        for await (const value of stream) throw new Error(`the caller failed at ${value}`);
      })(),
    ).rejects.toThrow('the caller failed');
    expect(reads.open).toBe(0);
  });
});
