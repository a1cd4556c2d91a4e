import { describe, expect, it } from 'vitest';
import { lineSplitter, parseCollection, parseLogRecord } from '../../../bench/support/daemon-output.js';

describe('parseCollection (--trace-gc lines)', () => {
  it('reads the kind, the isolate, the heap after it and the pause of a scavenge', () => {
    const line =
      '[12987:0x26b60e70]      146 ms: Scavenge 3.8 (4.0) -> 3.4 (5.0) MB, 13.03 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ';
    expect(parseCollection(line)).toEqual({
      kind: 'Scavenge',
      isolate: '0x26b60e70',
      afterMB: 3.4,
      pauseMs: 13.03,
    });
  });

  it('reads a mark-compact, reduced or not', () => {
    const line =
      '[12995:0x134b7d00]    80123 ms: Mark-Compact 53.1 (61.0) -> 40.2 (60.0) MB, 12.34 / 0.00 ms  (+ 5.6 ms in 23 steps since start of marking, biggest step 1.2 ms, walltime since start of marking 50 ms) (average mu = 0.991, current mu = 0.990) finalize incremental marking via task; GC in old space requested';
    expect(parseCollection(line)).toEqual({
      kind: 'Mark-Compact',
      isolate: '0x134b7d00',
      afterMB: 40.2,
      pauseMs: 12.34,
    });
    const reduced =
      '[1:0xab]  9 ms: Mark-Compact (reduce) 3.1 (4.0) -> 2.6 (5.0) MB, 3.77 / 0.00 ms  (average mu = 1.000)';
    expect(parseCollection(reduced)?.kind).toBe('Mark-Compact');
    expect(parseCollection(reduced)?.afterMB).toBe(2.6);
  });

  it('leaves other lines', () => {
    expect(parseCollection('{"level":30,"msg":"model swapped in"}')).toBeUndefined();
    expect(parseCollection('nextrec listening on http://127.0.0.1:1234')).toBeUndefined();
  });
});

describe('parseLogRecord', () => {
  it('reads a JSON record with a time and a message', () => {
    const record = parseLogRecord(
      '{"level":30,"time":1700000000000,"msg":"model swapped in","model":"ease","ms":12}',
    );
    expect(record).toMatchObject({ level: 30, msg: 'model swapped in', model: 'ease', ms: 12 });
  });

  it('leaves lines that are not records', () => {
    expect(parseLogRecord('{not json')).toBeUndefined();
    expect(parseLogRecord('{"a":1}')).toBeUndefined();
    expect(parseLogRecord('[1:0x1] 1 ms: Scavenge')).toBeUndefined();
  });
});

describe('lineSplitter', () => {
  it('gives each complete line once, a line cut short once it ends', () => {
    const lines: string[] = [];
    const split = lineSplitter((line) => lines.push(line));
    split('one\ntw');
    expect(lines).toEqual(['one']);
    split('o\nthree\n');
    expect(lines).toEqual(['one', 'two', 'three']);
    split('');
    expect(lines).toEqual(['one', 'two', 'three']);
  });
});
