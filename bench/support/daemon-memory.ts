import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { OPERATOR_KEY } from './bench-daemon.js';
import type { ChildServer } from './child-server.js';

// A daemon's memory as the benchmarks read it (from /proc and from GET /debug/memory), and waits for it to
// settle.

export const MIB = 1024 * 1024;
/** A build over millions of interactions takes a while on a shared 2-core machine. */
const MODEL_TIMEOUT_MS = 20 * 60_000;

/** The daemon's GET /debug/memory (see src/server/routes/memory.ts). */
export interface MemoryReport {
  process: { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number };
  heaps: {
    eventLoop: { used: number; total: number; external: number };
    rankingThread: { used: number; total: number; external: number } | null;
  };
  /** The pages of answers kept for `POST /recommendations/next` (docs/memory.md). */
  pages?: { entries: number; bytes: number };
  duckdb: { memoryLimit: string; threads: number; memory: Record<string, number>; temporary: number };
  tenants: Record<
    string,
    {
      items: number;
      identities: number;
      historyEvents: number;
      counterEvents: { recent: number; geo: number };
      cached: { documents: number; rendered: number; attributeColumns: number };
      perThread: Record<string, number>;
      shared: Record<string, number>;
      models: Record<string, { builtAt: number; source: number }>;
    }
  >;
}

export function mib(bytes: number): number {
  return Number((bytes / MIB).toFixed(1));
}

/** A field of /proc/<pid>/status in bytes. */
export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Resets the process's peak resident size to its current one, where the kernel allows it. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface Measured<T> {
  value: T;
  seconds: number;
  /** Resident bytes before, and at the peak during, the work. */
  before: number;
  peak: number;
}

/** Times `work` and reads the daemon's resident memory before it and at its peak during it. */
export async function measured<T>(daemon: ChildServer, work: () => Promise<T>): Promise<Measured<T>> {
  const before = procStatus(daemon.pid, 'VmRSS');
  const peakReset = resetPeak(daemon.pid);
  // Sampled too, for a kernel that keeps the peak from being reset.
  let sampled = before;
  const sampler = setInterval(() => (sampled = Math.max(sampled, procStatus(daemon.pid, 'VmRSS'))), 20);
  try {
    const started = process.hrtime.bigint();
    const value = await work();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const peak = peakReset ? Math.max(procStatus(daemon.pid, 'VmHWM'), sampled) : sampled;
    return { value, seconds, before, peak };
  } finally {
    clearInterval(sampler);
  }
}

export async function memoryReport(daemon: ChildServer): Promise<MemoryReport> {
  const response = await request(`${daemon.url}/debug/memory`, { headers: { 'x-api-key': OPERATOR_KEY } });
  const text = await response.body.text();
  if (response.statusCode !== 200)
    throw new Error(`GET /debug/memory answered ${response.statusCode}: ${text}`);
  return JSON.parse(text) as MemoryReport;
}

/**
 * Resolves once the tenant's models are loaded, built from at least `share` of what it holds
 * (interactions; items for vectors), and no newer version arrived for 10 s.
 */
export async function waitForModels(
  daemon: ChildServer,
  models: readonly string[],
  sources: Record<string, number>,
  share = 0.9,
): Promise<void> {
  const deadline = Date.now() + MODEL_TIMEOUT_MS;
  let last = '';
  let steadySince = Date.now();
  while (Date.now() < deadline) {
    const tenant = (await memoryReport(daemon)).tenants.bench;
    const loaded = models.map((model) => tenant.models[model]);
    const built = loaded.every((model, i) => model.source >= share * sources[models[i]]);
    const versions = JSON.stringify(loaded);
    if (versions !== last) {
      last = versions;
      steadySince = Date.now();
    }
    if (built && Date.now() - steadySince >= 10_000) return;
    await sleep(2_000);
  }
  throw new Error(`the models ${models.join(', ')} were not built in ${MODEL_TIMEOUT_MS / 60_000} min`);
}

export function describeMemory(label: string, rssMiB: number, report: MemoryReport): Record<string, unknown> {
  const tenant = report.tenants.bench;
  return {
    label,
    rssMiB,
    heapUsedMiB: {
      eventLoop: mib(report.heaps.eventLoop.used),
      rankingThread: report.heaps.rankingThread ? mib(report.heaps.rankingThread.used) : null,
    },
    heapTotalMiB: {
      eventLoop: mib(report.heaps.eventLoop.total),
      rankingThread: report.heaps.rankingThread ? mib(report.heaps.rankingThread.total) : null,
    },
    arrayBuffersMiB: mib(report.process.arrayBuffers),
    ...(report.pages && { pages: { entries: report.pages.entries, MiB: mib(report.pages.bytes) } }),
    duckdbMiB: Object.fromEntries(
      Object.entries(report.duckdb.memory).map(([tag, bytes]) => [tag, mib(bytes)]),
    ),
    ...(tenant && {
      state: {
        items: tenant.items,
        identities: tenant.identities,
        historyEvents: tenant.historyEvents,
        counterEvents: tenant.counterEvents,
        perThreadMiB: Object.fromEntries(Object.entries(tenant.perThread).map(([k, v]) => [k, mib(v)])),
        sharedMiB: Object.fromEntries(Object.entries(tenant.shared).map(([k, v]) => [k, mib(v)])),
        cached: tenant.cached,
      },
    }),
  };
}

/** Resolves once the daemon used less than a twentieth of a core over 5 s (at most after 5 min). */
export async function waitForQuiet(daemon: ChildServer): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  let before = daemon.cpuSeconds();
  while (before !== undefined && Date.now() < deadline) {
    await sleep(5_000);
    const after = daemon.cpuSeconds()!;
    if (after - before < 0.25) return;
    before = after;
  }
}

/** Resolves once the daemon used less than a tenth of a core over a second (at most after `timeoutMs`). */
export async function waitForDaemonIdle(daemon: ChildServer, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let before = daemon.cpuSeconds();
  while (before !== undefined && Date.now() < deadline) {
    await sleep(1_000);
    const after = daemon.cpuSeconds()!;
    if (after - before < 0.1) return;
    before = after;
  }
}
