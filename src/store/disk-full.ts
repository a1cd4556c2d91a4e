import { statfs } from 'node:fs/promises';

/**
 * A full disk under the data dir (docs/errors.md, 507 INSUFFICIENT_STORAGE): the interactions log,
 * DuckDB, the lake and model artifacts all write there, and each says so in its own words.
 */

/** Node's codes for a write refused for room: the file system is full, or the user's quota is. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);
/** What DuckDB (or a message quoting the system's error) says of the same. */
const FULL_MESSAGE = /no space left on device|disk quota exceeded|not enough space on the disk/i;
/** DuckDB after a fatal error (a checkpoint that could not write): it refuses everything until reopened. */
const INVALIDATED = /database has been invalidated/i;

/**
 * Whether `error` is a write refused because the disk is full: by its own code or message, not by a
 * cause's (an error with a cause, such as a feed sync applied and then failed, tells of more than that).
 */
export function isDiskFull(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined && FULL_CODES.has(code)) return true;
  return error.cause === undefined && FULL_MESSAGE.test(error.message);
}

/** Whether DuckDB refuses every statement until the database is opened again. */
export function isStoreInvalidated(error: unknown): boolean {
  return error instanceof Error && INVALIDATED.test(error.message);
}

/** How long after background work (a lake export, a model build) found the disk full it is tried again. */
export const DISK_FULL_RETRY_MS = 30_000;

/**
 * Bytes the data dir's file system must have free for `GET /health/ready` to report the disk as no longer
 * full before a write has succeeded again (docs/configuration.md, "Health and metrics").
 */
export const DISK_RECOVERED_BYTES = 16 * 1024 * 1024;

export type DiskReport = 'ok' | 'full';

/**
 * Whether the data dir's disk is full: from a write refused for room until a write succeeds again, or
 * until its file system has DISK_RECOVERED_BYTES free (looked at when asked).
 */
export class DiskState {
  private full = false;

  constructor(private readonly dir: string) {}

  get isFull(): boolean {
    return this.full;
  }

  /** A write to the data dir failed: the disk is full if that is why. Returns whether it is. */
  failed(error: unknown): boolean {
    if (!isDiskFull(error)) return false;
    this.full = true;
    return true;
  }

  /** A write to the data dir succeeded: there is room again. */
  wrote(): void {
    this.full = false;
  }

  /** `ok` or `full`; while full, looks whether room came back (someone freed space). */
  async report(): Promise<DiskReport> {
    if (!this.full) return 'ok';
    const free = await statfs(this.dir)
      .then((stats) => stats.bavail * stats.bsize)
      .catch(() => 0);
    if (free >= DISK_RECOVERED_BYTES) this.full = false;
    return this.full ? 'full' : 'ok';
  }
}
