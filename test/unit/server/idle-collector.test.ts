import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { IdleCollector, followRequests, heapSize } from '../../../src/server/idle-collector.js';
import { fullCollection, releasingCollection } from '../../../src/state/memory.js';

const MB = 1024 * 1024;
const OPTIONS = { checkMs: 1_000, quietMs: 3_000, growthBytes: 32 * MB, retryMs: 30_000 };

/** A collector over a heap and a clock the test moves; a collection shrinks the heap to `live`. */
function rig() {
  const heap = { size: 100 * MB, live: 100 * MB };
  const clock = { now: 0 };
  let others = 0;
  const collector = new IdleCollector({
    collect: () => {
      heap.size = heap.live;
    },
    size: () => heap.size,
    options: OPTIONS,
    now: () => clock.now,
    alsoCollect: () => others++,
  });
  // What a start-up load left is collected at the first quiet moment.
  expect(collector.check()).toBe(true);
  collector.collections = 0;
  return { heap, clock, collector, others: () => others };
}

describe('IdleCollector', () => {
  it('collects once the heap grew and no request came for a while, and not again until it grows again', () => {
    const { heap, clock, collector, others } = rig();
    heap.size += 200 * MB;
    collector.requested();
    collector.answered();
    clock.now = 2_999;
    expect(collector.check()).toBe(false);
    clock.now = 3_000;
    expect(collector.check()).toBe(true);
    expect(heap.size).toBe(100 * MB);
    expect(collector.check()).toBe(false);
    heap.size += 31 * MB;
    expect(collector.check()).toBe(false);
    heap.size += 1 * MB;
    expect(collector.check()).toBe(true);
    expect(collector.collections).toBe(2);
    // The ranking thread was asked each time too (and at the start).
    expect(others()).toBe(3);
  });

  it('waits while a request is in flight, however long it takes, and counts quiet from its answer', () => {
    const { heap, clock, collector } = rig();
    heap.size += 200 * MB;
    collector.requested();
    clock.now = 60_000;
    expect(collector.check()).toBe(false);
    collector.answered();
    clock.now = 62_999;
    expect(collector.check()).toBe(false);
    clock.now = 63_000;
    expect(collector.check()).toBe(true);
  });

  it('leaves a daemon under traffic to V8 however its heap grows', () => {
    const { heap, clock, collector } = rig();
    heap.size += 500 * MB;
    for (clock.now = 0; clock.now < 60_000; clock.now += 1_000) {
      collector.requested();
      collector.answered();
      expect(collector.check()).toBe(false);
    }
    expect(collector.collections).toBe(0);
  });

  it('retries later what a collection could not free because it was still referenced', () => {
    const { heap, clock, collector } = rig();
    heap.size += 200 * MB;
    heap.live += 200 * MB;
    clock.now = 3_000;
    expect(collector.check()).toBe(true);
    expect(heap.size).toBe(300 * MB);
    // Let go of without the heap growing: only a retry frees it, and not before retryMs.
    heap.live = 100 * MB;
    clock.now = 32_999;
    expect(collector.check()).toBe(false);
    collector.requested();
    collector.answered();
    clock.now = 33_000;
    expect(collector.check()).toBe(false);
    clock.now = 36_000;
    expect(collector.check()).toBe(true);
    expect(heap.size).toBe(100 * MB);
    clock.now = 600_000;
    expect(collector.check()).toBe(false);
    expect(collector.collections).toBe(2);
  });

  it('retries once when what the heap grew by is live, then takes it as the base', () => {
    const { heap, clock, collector } = rig();
    heap.size += 200 * MB;
    heap.live += 200 * MB;
    clock.now = 3_000;
    expect(collector.check()).toBe(true);
    clock.now = 33_000;
    expect(collector.check()).toBe(true);
    for (clock.now = 34_000; clock.now < 600_000; clock.now += 1_000) expect(collector.check()).toBe(false);
    expect(collector.collections).toBe(2);
    // Growth past the new base still collects.
    heap.size += 32 * MB;
    expect(collector.check()).toBe(true);
  });

  it('takes a heap V8 shrank by itself as its new base', () => {
    const { heap, clock, collector } = rig();
    clock.now = 10_000;
    heap.size = 60 * MB;
    expect(collector.check()).toBe(false);
    heap.size = 93 * MB;
    expect(collector.check()).toBe(true);
  });

  it("runs V8's full collection without --expose-gc, which frees a load's garbage", () => {
    const used = () => getHeapStatistics().used_heap_size;
    const collect = fullCollection();
    collect();
    const before = used();
    let garbage: number[][] | undefined = Array.from({ length: 200_000 }, (_, i) => [i, i + 0.5, i + 0.25]);
    expect(garbage.length).toBe(200_000);
    expect(used()).toBeGreaterThan(before + 8 * MB);
    garbage = undefined;
    expect(garbage).toBeUndefined();
    collect();
    expect(used()).toBeLessThan(before + 4 * MB);
    expect(heapSize()).toBeGreaterThan(0);
  });

  it('gives back, when collecting for an idle thread, the pages a collection emptied', () => {
    const total = () => getHeapStatistics().total_heap_size;
    const kept: { n: number; text: string }[] = [];
    /** 1,000,000 small objects, of which one in 20 is kept: the rest leave pages with little live on them. */
    const load = (collect: () => void): number => {
      let garbage: { n: number; text: string }[] | undefined = [];
      for (let n = 0; n < 1_000_000; n++) (n % 20 === 0 ? kept : garbage).push({ n, text: `x${n}` });
      garbage = undefined;
      expect(garbage).toBeUndefined();
      collect();
      return total();
    };
    releasingCollection()();
    const released = load(releasingCollection());
    // One collection frees the objects but keeps the pages they took.
    const once = load(fullCollection());
    expect(released).toBeLessThan(once - 24 * MB);
    expect(kept.length).toBe(100_000);
  });

  it('counts the buffers a thread allocated outside its heap, which grow while the heap does not', async () => {
    const collect = fullCollection();
    collect();
    const before = heapSize();
    const heapBefore = getHeapStatistics().total_physical_size;
    let buffers: Buffer[] | undefined = Array.from({ length: 64 }, () => Buffer.alloc(MB, 1));
    expect(buffers.length).toBe(64);
    expect(heapSize()).toBeGreaterThan(before + 48 * MB);
    expect(getHeapStatistics().total_physical_size).toBeLessThan(heapBefore + 16 * MB);
    buffers = undefined;
    expect(buffers).toBeUndefined();
    // V8 frees the buffers' memory after the collection, in a sweep of its own.
    collect();
    await new Promise((resolve) => setTimeout(resolve, 100));
    collect();
    expect(heapSize()).toBeLessThan(before + 16 * MB);
  });
  it('follows the requests of a server: in flight until answered, or until their connection closes', async () => {
    const collector = new IdleCollector();
    const held: (() => void)[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/hold') held.push(() => res.end('held'));
      else res.end('ok');
    });
    followRequests(server, collector);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const until = async (condition: () => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    try {
      const answered = await new Promise<string>((resolve) =>
        request({ port, host: '127.0.0.1', path: '/' }, (res) => {
          res.setEncoding('utf8');
          let body = '';
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve(body));
        }).end(),
      );
      expect(answered).toBe('ok');
      await until(() => collector.requestsInFlight === 0);
      // Three pipelined requests, the first held: the other two wait behind it, and the connection closes.
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
      socket.write(get('/hold') + get('/') + get('/'));
      await until(() => held.length === 1);
      expect(collector.requestsInFlight).toBeGreaterThanOrEqual(1);
      socket.destroy();
      await until(() => collector.requestsInFlight === 0);
      expect(collector.requestsInFlight).toBe(0);
    } finally {
      for (const release of held) release();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
