import { describe, expect, it } from 'vitest';
import { AnswerLog } from '../../../bench/support/answer-log.js';
import { TRAFFIC_KINDS, type TrafficKind } from '../../../bench/support/shop-traffic.js';
import type { AnsweredRequests } from '../../../bench/support/traffic-load.js';

const kindIndex = (kind: TrafficKind) => TRAFFIC_KINDS.indexOf(kind);

function report(
  answers: [index: number, latencyMs: number, kind: TrafficKind, status: number][],
): AnsweredRequests {
  return {
    index: Uint32Array.from(answers.map(([index]) => index)),
    latencyMs: Float64Array.from(answers.map(([, latency]) => latency)),
    kind: Uint8Array.from(answers.map(([, , kind]) => kindIndex(kind))),
    status: Uint16Array.from(answers.map(([, , , status]) => status)),
    acknowledgedEvents: answers.filter(([, , kind, status]) => kind === 'interaction' && status === 200)
      .length,
    miscounted: 0,
  };
}

describe('AnswerLog', () => {
  // 4 requests a second, windows of 1 s: requests 0-3 in the first, 4-7 in the second.
  const log = () => new AnswerLog(8, 4, 1000);

  it('tells a window complete once every request due in it was answered, in any order', () => {
    const answers = log();
    answers.add(
      report([
        [1, 2, 'user-to-item', 200],
        [4, 3, 'interaction', 200],
        [0, 1, 'legacy-get', 200],
      ]),
    );
    expect(answers.complete(0)).toBe(false);
    answers.add(
      report([
        [3, 4, 'item-to-item', 200],
        [2, 9, 'item-upsert', 200],
      ]),
    );
    expect(answers.complete(0)).toBe(true);
    expect(answers.complete(1)).toBe(false);
    expect(answers.window(0)).toMatchObject({
      startS: 0,
      all: { count: 4, maxMs: 9 },
      recommendations: { count: 3, maxMs: 4 },
      writes: { count: 1, p50Ms: 9 },
    });
    expect(answers.acknowledgedEvents).toBe(1);
  });

  it('gives the windows and each kind of the requests sent, and counts the answers but 200', () => {
    const answers = log();
    answers.add(
      report([
        [0, 1, 'user-to-item', 200],
        [1, 2, 'user-to-item', 200],
        [2, 3, 'interaction', 503],
        [3, 4, 'user-to-item', 200],
        [4, 5, 'interaction', 200],
        [5, 6, 'user-to-item', 0],
      ]),
    );
    answers.sent = 6;
    expect(answers.windows(6).map((w) => [w.startS, w.all.count])).toEqual([
      [0, 4],
      [1, 2],
    ]);
    expect(answers.non200(6)).toBe(2);
    const byKind = answers.byKind(1);
    expect(byKind['user-to-item']).toMatchObject({ count: 1, maxMs: 6 });
    expect(byKind.interaction).toMatchObject({ count: 1, maxMs: 5 });
    expect(byKind['item-upsert'].count).toBe(0);
    // A window past the requests sent holds none.
    expect(answers.window(2).all.count).toBe(0);
  });
});
