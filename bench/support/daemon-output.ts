/**
 * What a daemon's output tells of its pauses: V8's `--trace-gc` lines (one per collection, of any of its
 * threads) and its log's JSON records (docs/batch-models.md: `model swapped in`, with how long it took).
 */
export interface Collection {
  /** V8's name for it: Scavenge, Mark-Compact, Minor Mark-Compact, ... */
  kind: string;
  /** The isolate (thread) it ran in: its address in the line's prefix. */
  isolate: string;
  /** How long it held the thread up. */
  pauseMs: number;
  /** The heap's objects after it, in MB (after a Mark-Compact: the live ones, docs/memory.md). */
  afterMB: number;
}

// [pid:0xisolate]   12345 ms: Scavenge 10.1 (12.3) -> 9.5 (13.3) MB, 1.23 / 0.00 ms  (average mu = ...
const TRACE_GC =
  /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: ([A-Za-z -]+?)(?: \([a-z ]+\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \/ [\d.]+ ms/;

/** The collection a `--trace-gc` line reports, or undefined for any other line. */
export function parseCollection(line: string): Collection | undefined {
  const match = TRACE_GC.exec(line);
  return match
    ? { isolate: match[1], kind: match[2], afterMB: Number(match[3]), pauseMs: Number(match[4]) }
    : undefined;
}

/** A record of the daemon's log (pino: JSON, one a line), or undefined for any other line. */
export interface LogRecord {
  time: number;
  level: number;
  msg: string;
  [field: string]: unknown;
}

export function parseLogRecord(line: string): LogRecord | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const record = JSON.parse(line) as Partial<LogRecord>;
    return typeof record.time === 'number' && typeof record.msg === 'string'
      ? (record as LogRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Calls `onLine` with each complete line of the chunks it is given (a line cut short waits for its end). */
export function lineSplitter(onLine: (line: string) => void): (chunk: string) => void {
  let partial = '';
  return (chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) onLine(line);
  };
}
