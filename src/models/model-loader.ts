import { readdirSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  MODEL_NAMES,
  modelDir,
  readCurrentVersion,
  versionName,
  type ModelName,
} from '../artifacts/layout.js';
import type { Manifest } from '../artifacts/manifest.js';
import type { ModelVersionRecord } from '../store/api/runners.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import { installModel, prepareModel, type PreparedModel } from './prepared-model.js';

export interface LoaderLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** No record beside the pointers (a store one process owns, the CLI, tests). */
const POINTERS_ONLY: ModelVersionRecord = {
  published: () => Promise.resolve(new Map()),
  publish: () => Promise.resolve(),
};

/** Whether a version's folder can be seen (yet: another daemon may have just published it). */
async function visible(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Opens a version of a tenant's model, checks it and puts it in the tenant's serving state (and so, through
 * the state's changes, in the ranking thread's replica), all in this thread. Throws, changing nothing,
 * when the artifact is missing, incomplete, corrupt or inconsistent.
 */
export function loadModel(dataDir: string, tenant: TenantState, model: ModelName, version: number): Manifest {
  const prepared = prepareModel(dataDir, tenant.tenantId, model, version, tenant.catalog);
  installModel(tenant, model, prepared);
  return prepared.manifest;
}

/** What the loading thread is asked: one version, and the catalog's ids (dense id → external id). */
export interface LoadRequest {
  id: number;
  dataDir: string;
  tenantId: string;
  model: ModelName;
  version: number;
  externalIds: string[];
}

export type LoadAnswer = { id: number; prepared: PreparedModel } | { id: number; failure: string };

/** What a loading thread says first, on Linux: its thread id, for the daemon to choose its CPUs. */
export interface LoadingThreadStarted {
  tid: number;
}

/** Checks and maps a version for a tenant; rejects with the reason a version is refused. */
export interface ModelPreparer {
  prepare(dataDir: string, tenant: TenantState, model: ModelName, version: number): Promise<PreparedModel>;
  close(): Promise<void>;
  /** Told the Linux thread id of each thread it starts to load in, if it starts any. */
  onThreadStarted?(listener: (tid: number) => void): void;
}

/** Prepares in this thread (the CLI, tests). */
export const inThisThread: ModelPreparer = {
  prepare: async (dataDir, tenant, model, version) =>
    prepareModel(dataDir, tenant.tenantId, model, version, tenant.catalog),
  close: async () => undefined,
};

const LOAD_WORKER = new URL('./model-load-worker.js', import.meta.url);

/**
 * How long a loading thread waits for another version before it ends. An idle thread never collects
 * what its last load left in its heap (the files it read, the catalog's ids): ending it gives that back
 * (docs/memory.md). The thread for small versions waits longer: their loads leave little, and a thread
 * started anew for each of a small tenant's frequent versions would compile its modules each time.
 */
const IDLE_MS = 2_000;
const SMALL_IDLE_MS = 60_000;

/** What a loading thread is told at its start. */
export interface LoadingThreadOptions {
  /** At the builds' priority (docs/batch-models.md, "Hot swap"), and placed where builds run. */
  niced: boolean;
}

/** Prepares in a thread of its own (model-load-worker.ts), started when a version is to load. */
export class ThreadPreparer implements ModelPreparer {
  private worker: Worker | undefined;
  private idle: NodeJS.Timeout | undefined;
  private readonly waiting = new Map<
    number,
    { resolve: (p: PreparedModel) => void; reject: (e: Error) => void }
  >();
  private next = 0;
  private threadStarted: (tid: number) => void = () => undefined;

  constructor(
    private readonly script: URL = LOAD_WORKER,
    private readonly idleMs = IDLE_MS,
    private readonly options: LoadingThreadOptions = { niced: true },
  ) {}

  /** The thread for small versions: at the daemon's priority, kept for a minute between loads. */
  static forSmallVersions(script: URL = LOAD_WORKER): ThreadPreparer {
    return new ThreadPreparer(script, SMALL_IDLE_MS, { niced: false });
  }

  onThreadStarted(listener: (tid: number) => void): void {
    this.threadStarted = listener;
  }

  /** Whether a loading thread is running now (tests). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  prepare(dataDir: string, tenant: TenantState, model: ModelName, version: number): Promise<PreparedModel> {
    clearTimeout(this.idle);
    const worker = (this.worker ??= this.start());
    const request: LoadRequest = {
      id: ++this.next,
      dataDir,
      tenantId: tenant.tenantId,
      model,
      version,
      externalIds: tenant.catalog.externalIds,
    };
    return new Promise((resolve, reject) => {
      this.waiting.set(request.id, { resolve, reject });
      worker.postMessage(request);
    });
  }

  private start(): Worker {
    const worker = new Worker(this.script, { workerData: this.options });
    worker.unref();
    worker.on('message', (answer: LoadAnswer | LoadingThreadStarted) => {
      if ('tid' in answer) return this.threadStarted(answer.tid);
      const waiting = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if ('prepared' in answer) waiting?.resolve(answer.prepared);
      else waiting?.reject(new Error(answer.failure));
      if (this.waiting.size === 0) this.endWhenIdle(worker);
    });
    // A thread that failed takes its requests with it; the next version to load starts another.
    const failed = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    };
    worker.on('error', failed);
    worker.on('exit', (code) => failed(new Error(`the model loading thread exited (code ${code})`)));
    return worker;
  }

  private endWhenIdle(worker: Worker): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.worker !== worker || this.waiting.size > 0) return;
      this.worker = undefined;
      void worker.terminate();
    }, this.idleMs);
    this.idle.unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
    for (const waiting of this.waiting.values()) waiting.reject(new Error('the model loading thread closed'));
    this.waiting.clear();
  }
}

/**
 * Versions up to this size (their files together) go to the loader's preparer for small versions
 * (docs/batch-models.md, "Hot swap"): the daemon's is a loading thread at its own priority, so that a
 * small tenant's frequent versions neither wait for a CPU that a busy machine never leaves the builds'
 * priority, past the 5 s within which model effects show, nor take the event loop's time (mapping a
 * 640 KiB co-occurrence version took it 3 ms at best and 28 ms at the median on a busy machine).
 */
export const SMALL_VERSION_BYTES = 4 * 1024 * 1024;

/** Where versions are prepared, by size (see SMALL_VERSION_BYTES). */
export interface ModelPreparers {
  small: ModelPreparer;
  large: ModelPreparer;
}

/** Both in this thread (the CLI, tests). */
export const IN_THIS_THREAD: ModelPreparers = { small: inThisThread, large: inThisThread };

/** The daemon's: two loading threads, one at its priority for small versions, one niced for large ones. */
export function loadingThreads(script?: URL): ModelPreparers {
  return { small: ThreadPreparer.forSmallVersions(script), large: new ThreadPreparer(script) };
}

/** The size of a version's files together, or Infinity when they cannot be listed. */
function versionBytes(dir: string): number {
  try {
    return readdirSync(dir).reduce((sum, name) => sum + statSync(path.join(dir, name)).size, 0);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Hot swap (docs/batch-models.md): every `intervalMs` it reads each tenant's CURRENT pointers, and the
 * store's record of versions where daemons share one ("Cluster mode"), and loads the newer of the two
 * when it is newer than the version serving. A pointer newer than the record is recorded, so that every
 * daemon swaps in what one of them (or `nextrec build`) published. A version that fails to load is logged
 * and not tried again; the model serving keeps serving. A version whose folder cannot be seen yet is
 * looked for again at the next poll.
 */
export class ModelLoader {
  private readonly serving = new Map<string, number>();
  private readonly refused = new Map<string, number>();
  /** The version each model is published at, as the last poll found it. */
  private readonly published = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private log: LoaderLog = { info: () => undefined, error: () => undefined };
  private polling: Promise<number> | undefined;
  private installed: (tenant: TenantState, model: ModelName) => void = () => undefined;

  constructor(
    private readonly dataDir: string,
    private readonly state: ServingState,
    private readonly models: readonly ModelName[] = MODEL_NAMES,
    private readonly preparers: ModelPreparers = IN_THIS_THREAD,
    /** Versions up to this size go to the preparer for small versions. */
    private readonly smallBytes = SMALL_VERSION_BYTES,
    /** Where the version to serve is recorded beside the pointers (the store's). */
    private readonly record: ModelVersionRecord = POINTERS_ONLY,
  ) {}

  /** Told of each version swapped in, once it serves. */
  onInstalled(listener: (tenant: TenantState, model: ModelName) => void): void {
    this.installed = listener;
  }

  /** Loads what is current now (resolving when it is in place), then looks every `intervalMs`. */
  start(log: LoaderLog, intervalMs = 1_000): Promise<number> {
    this.log = log;
    this.timer = setInterval(() => void this.poll(), intervalMs);
    this.timer.unref();
    return this.poll();
  }

  /** Stops looking for versions, and ends the loading thread once the load in progress is done. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    await Promise.all([this.preparers.small.close(), this.preparers.large.close()]);
  }

  /** The version of a tenant's model that serves, if any. */
  servingVersion(tenantId: string, model: ModelName): number | undefined {
    return this.serving.get(`${tenantId}/${model}`);
  }

  /** The version of a tenant's model published (pointer or record), as the last poll found it. */
  publishedVersion(tenantId: string, model: ModelName): number | undefined {
    return this.published.get(`${tenantId}/${model}`);
  }

  /** The last version of a tenant's model this daemon refused, if any. */
  refusedVersion(tenantId: string, model: ModelName): number | undefined {
    return this.refused.get(`${tenantId}/${model}`);
  }

  /**
   * Loads every newer CURRENT version now, one after another; resolves to how many were swapped in. A
   * call while a poll is under way waits for that one instead of starting another.
   */
  poll(): Promise<number> {
    this.polling ??= this.pollOnce().finally(() => (this.polling = undefined));
    return this.polling;
  }

  /**
   * A poll that starts after this call: a poll already under way may have passed the tenant of a version
   * published since (a build that just ended), so it is waited for, and then another is run or joined;
   * given a tenant, the poll looks at that tenant's models alone.
   */
  async pollAgain(tenantId?: string): Promise<number> {
    await this.polling?.catch(() => undefined);
    if (tenantId === undefined) return this.poll();
    this.polling ??= this.pollOnce([tenantId]).finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pollOnce(tenantIds: Iterable<string> = this.state.ids()): Promise<number> {
    const recorded = await this.record.published().catch((error: unknown) => {
      this.log.error({ reason: (error as Error).message }, 'reading the published model versions failed');
      return new Map<string, number>();
    });
    let swapped = 0;
    for (const tenantId of tenantIds) {
      for (const model of this.models) {
        const tenant = this.state.get(tenantId);
        if (tenant && (await this.load(tenant, model, recorded.get(`${tenantId}/${model}`)))) swapped++;
      }
    }
    return swapped;
  }

  /**
   * The version to serve: the pointer's or the record's, whichever is newer; a pointer newer than the
   * record is recorded (the record keeps the newer of two racing publishers' versions).
   */
  private async publishedOf(
    tenantId: string,
    model: ModelName,
    recorded: number | undefined,
  ): Promise<number | undefined> {
    const pointer = await readCurrentVersion(modelDir(this.dataDir, tenantId, model));
    if (pointer !== undefined && pointer > (recorded ?? 0)) {
      await this.record.publish(tenantId, model, pointer).catch((error: unknown) => {
        this.log.error(
          { tenantId, model, version: pointer, reason: (error as Error).message },
          'recording a published model version failed',
        );
      });
    }
    const version = Math.max(pointer ?? 0, recorded ?? 0);
    return version > 0 ? version : undefined;
  }

  private async load(tenant: TenantState, model: ModelName, recorded: number | undefined): Promise<boolean> {
    const { tenantId } = tenant;
    const key = `${tenantId}/${model}`;
    const version = await this.publishedOf(tenantId, model, recorded);
    if (version !== undefined) this.published.set(key, version);
    if (version === undefined || version <= (this.serving.get(key) ?? 0) || this.refused.get(key) === version)
      return false;
    const dir = path.join(modelDir(this.dataDir, tenantId, model), versionName(version));
    if (!(await visible(dir))) return false;
    const started = performance.now();
    try {
      const bytes = versionBytes(dir);
      const preparer = bytes <= this.smallBytes ? this.preparers.small : this.preparers.large;
      const prepared = await preparer.prepare(this.dataDir, tenant, model, version);
      installModel(tenant, model, prepared);
      this.serving.set(key, version);
      const ms = Math.round(performance.now() - started);
      this.log.info({ tenantId, model, version, source: prepared.manifest.source, ms }, 'model swapped in');
      this.installed(tenant, model);
      return true;
    } catch (error) {
      this.refused.set(key, version);
      this.log.error(
        { tenantId, model, version, reason: (error as Error).message },
        'model refused; the previous one keeps serving',
      );
      return false;
    }
  }
}
