import { isWrite, TRAFFIC_KINDS } from './shop-traffic.js';
import type { AnsweredRequests } from './traffic-load.js';
import {
  latencyFigures,
  latencyWindows,
  type LatencyFigures,
  type LatencyWindow,
} from './latency-windows.js';

/** An open-loop run's answers, by request index (traffic-load.ts reports them as they come). */
export class AnswerLog {
  readonly latencyMs: Float64Array;
  readonly write: Uint8Array;
  /** Index into TRAFFIC_KINDS. */
  readonly kind: Uint8Array;
  readonly status: Uint16Array;
  /** Answers per window, to tell when a window is complete. */
  readonly perWindow: number[] = [];
  acknowledgedEvents = 0;
  miscounted = 0;
  firstFailure?: string;
  /** Requests past this many were never sent (the run was interrupted). */
  sent: number;

  constructor(
    readonly total: number,
    /** Requests a second: request i was due i / rate seconds after the start. */
    private readonly rate: number,
    private readonly windowMs: number,
  ) {
    this.sent = total;
    this.latencyMs = new Float64Array(total);
    this.write = new Uint8Array(total);
    this.kind = new Uint8Array(total);
    this.status = new Uint16Array(total);
  }

  dueMs(index: number): number {
    return (index * 1000) / this.rate;
  }

  add(answered: AnsweredRequests): void {
    answered.index.forEach((index, i) => {
      this.latencyMs[index] = answered.latencyMs[i];
      this.kind[index] = answered.kind[i];
      this.write[index] = isWrite(TRAFFIC_KINDS[answered.kind[i]]) ? 1 : 0;
      this.status[index] = answered.status[i];
      const w = Math.floor(this.dueMs(index) / this.windowMs);
      this.perWindow[w] = (this.perWindow[w] ?? 0) + 1;
    });
    this.acknowledgedEvents += answered.acknowledgedEvents;
    this.miscounted += answered.miscounted;
    this.firstFailure ??= answered.firstFailure;
  }

  /** The first index due in window `w` (of those up to `total`). */
  firstOf(w: number): number {
    return Math.min(this.sent, Math.ceil((w * this.windowMs * this.rate) / 1000));
  }

  complete(w: number): boolean {
    return (this.perWindow[w] ?? 0) >= this.firstOf(w + 1) - this.firstOf(w);
  }

  windows(sent: number, windowMs = this.windowMs): LatencyWindow[] {
    const dueMs = Float64Array.from({ length: sent }, (_, i) => this.dueMs(i));
    return latencyWindows({ dueMs, latencyMs: this.latencyMs, write: this.write, count: sent }, windowMs);
  }

  /** Window `w` alone, from its requests' answers so far. */
  window(w: number): LatencyWindow {
    const from = this.firstOf(w);
    const count = this.firstOf(w + 1) - from;
    // Every request in one window: due at 0 of its own.
    const [window] = latencyWindows(
      {
        dueMs: new Float64Array(count),
        latencyMs: this.latencyMs.subarray(from),
        write: this.write.subarray(from),
        count,
      },
      this.windowMs,
    );
    const startS = (w * this.windowMs) / 1000;
    if (window) return { ...window, startS };
    // After the traffic: its last answers kept the run going.
    const none = latencyFigures([]);
    return { startS, all: none, recommendations: none, writes: none };
  }

  /** Each kind's figures over the requests due from `fromS` on. */
  byKind(fromS: number): Record<string, LatencyFigures> {
    const from = this.firstOf((fromS * 1000) / this.windowMs);
    return Object.fromEntries(
      TRAFFIC_KINDS.map((kind, k) => [
        kind,
        latencyFigures(this.latencyMs.subarray(from, this.sent).filter((_, i) => this.kind[from + i] === k)),
      ]),
    );
  }

  non200(sent: number): number {
    return this.status.subarray(0, sent).filter((status) => status !== 200).length;
  }
}
