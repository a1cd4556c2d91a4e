import { DiskState, isDiskFull, type DiskReport } from '../disk-full.js';

/** PostgreSQL's SQLSTATE for a write refused for room on the server (class 53, insufficient resources). */
const DISK_FULL_SQLSTATE = '53100';

/** Whether `error` is PostgreSQL refusing a write because its disk is full, or any other disk-full error. */
export function isPostgresDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === DISK_FULL_SQLSTATE || isDiskFull(error);
}

/**
 * Whether the PostgreSQL server's disk is full (docs/configuration.md, "Health and metrics"): from a write
 * it refused for room (SQLSTATE 53100) until one of its writes commits again. Unlike DuckDB's data dir,
 * the server's file system cannot be looked at from the daemon, so `report` has no free space to check:
 * the next write (the write queue's, or a client's retry after 507's Retry-After) tells.
 *
 * The store's interface asks for a DiskState; every public member is overridden here, and the data dir
 * given to DiskState is never looked at.
 */
export class PostgresDiskState extends DiskState {
  private serverFull = false;

  constructor() {
    super('');
  }

  override get isFull(): boolean {
    return this.serverFull;
  }

  override failed(error: unknown): boolean {
    if (!isPostgresDiskFull(error)) return false;
    this.serverFull = true;
    return true;
  }

  override wrote(): void {
    this.serverFull = false;
  }

  override async report(): Promise<DiskReport> {
    return this.serverFull ? 'full' : 'ok';
  }
}
