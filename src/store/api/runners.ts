/**
 * The background work of a tenant that one process runs at a time among the daemons sharing a store
 * (docs/batch-models.md, "Cluster mode"):
 * - `models`: the tenant's model builds, held by the daemon that claimed them, for as long as it runs;
 * - `lake`: a write of the tenant's lake (an export, an erasure), by whichever daemon, one at a time;
 * - `feeds`: the tenant's feed schedule, held as `models` is;
 * - `retention`: removing what outlived its retention (the record of answers' old days), held as
 *   `models` is, for every tenant at once (ALL_TENANTS).
 */
export type RunnerKind = 'models' | 'lake' | 'feeds' | 'retention';

/** The "tenant" of work done for every tenant at once (no tenant id can be it). */
export const ALL_TENANTS = '*';

/** A claim a process holds. */
export interface RunnerClaim {
  kind: RunnerKind;
  tenantId: string;
}

/**
 * Who runs which background work, among the processes sharing a store. A claim is held until the process
 * that took it closes the store, or dies: a daemon killed mid-task leaves nothing held (on PostgreSQL, a
 * claim is a session's advisory lock, released with its connection). Where one process owns the store
 * (DuckDB), every claim is granted.
 */
export interface Runners {
  /**
   * Whether this process runs the tenant's work of this kind: true once it claimed it (now or before),
   * false while another process holds it. Ask before each task; a claim lost with the store's connection
   * is claimed anew by whichever process asks first.
   */
  claim(kind: RunnerKind, tenantId: string): Promise<boolean>;
  /**
   * Runs `task` once no other process, and no other task of this one, runs work of this kind for the
   * tenant, waiting for that; the work is held for this process while `task` runs, and released after.
   */
  exclusive<T>(kind: RunnerKind, tenantId: string, task: () => Promise<T>): Promise<T>;
  /** The claims this process holds now (tasks of `exclusive` left out). */
  claims(): RunnerClaim[];
}

/**
 * Where the version of each tenant's model that serves is recorded, beside the artifacts' `CURRENT`
 * pointers (docs/batch-models.md, "Cluster mode"): on PostgreSQL a row per tenant and model, which every
 * daemon reads, rather than a file of a shared directory whose cached attributes may look stale. Where
 * one process owns the store (DuckDB) the pointers are the record, and this records nothing.
 */
export interface ModelVersionRecord {
  /** The version recorded for each tenant's model, by `<tenantId>/<model>`. */
  published(): Promise<Map<string, number>>;
  /** Records `version` of the tenant's model as the one to serve, unless a newer one is recorded. */
  publish(tenantId: string, model: string, version: number): Promise<void>;
}
