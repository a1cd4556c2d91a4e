import pg from 'pg';
import type { ChangeFeed, ChangePosition, ChangeReads, ChangeSnapshot, StoreChange } from '../api/changes.js';
import { CHANGES_CHANNEL, type LoggedChange } from './change-log.js';
import { pgChangeReads } from './change-reads.js';
import { pgLoadReads } from './load-reads.js';
import { ROWS_PER_CHUNK, selectRows } from './read-rows.js';
import { pgTenantReads } from './tenant-reads.js';

/**
 * How often the counters are read whatever the notifications say: a notification is lost when the
 * listening connection breaks, and this bounds how late a change is followed then.
 */
export const POLL_MS = 1000;

/**
 * How long the log keeps a change: a daemon that follows later than this (stalled, or loading its state
 * for longer) has missed changes, and says so (ChangesLostError). Any daemon removes older ones, every
 * PRUNE_MS.
 */
export const RETENTION_MS = 60 * 60_000;
const PRUNE_MS = 60_000;

/** Changes a daemon had not applied were removed from the log: its state must be loaded anew. */
export class ChangesLostError extends Error {
  constructor(tenantId: string, after: number, next: number) {
    super(
      `changes ${after + 1} to ${next - 1} of tenant '${tenantId}' left the log before this daemon applied ` +
        `them (it followed more than ${RETENTION_MS / 60_000} minutes late): restart it to load its state anew`,
    );
    this.name = 'ChangesLostError';
  }
}

/** How long a listening connection that failed waits before it connects again. */
const RECONNECT_MS = 1000;

/** Changes of a tenant read (and applied) at a time. */
const CHANGES_PER_READ = 1000;

type Apply = (change: StoreChange) => Promise<void>;

/** The tenants' positions in the log as the counters hold them. */
async function counters(db: pg.Pool | pg.PoolClient): Promise<ChangePosition> {
  const rows = await selectRows(db, 'SELECT tenant_id, seq FROM change_counters');
  return new Map(rows.map(([tenantId, seq]) => [String(tenantId), Number(seq)]));
}

/**
 * The changes other daemons commit to the database (src/store/api/changes.ts), followed through a
 * connection of its own that LISTENs on the channel every write's transaction notifies at commit
 * (change-log.ts), and, in case a notification is lost, by reading the tenants' counters every POLL_MS.
 * A tenant whose counter is ahead of the position is read from the log in order; the changes of
 * `origin` (this store) are passed over.
 */
export class PgChangeFeed implements ChangeFeed {
  readonly reads: ChangeReads;
  private position: ChangePosition = new Map();
  /** The counters as last read. */
  private counters: ChangePosition = new Map();
  /** Tenants with changes past the position, as notifications tell. */
  private readonly behind = new Set<string>();
  private pollDue = false;
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private listener: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private pruning: Promise<void> | undefined;
  private closed = false;
  private waiters: { target: ChangePosition; resolve: () => void }[] = [];
  private apply: Apply = () => Promise.resolve();
  private failed: (error: unknown) => void = () => undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly origin: string,
  ) {
    this.reads = pgChangeReads(pool);
  }

  /**
   * A snapshot exported by a read-only transaction held open until released: loading reads in it on
   * connections of the pool, and the counters read in it are the position of the log that matches.
   */
  async snapshot(): Promise<ChangeSnapshot> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const exported = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
      const id = exported.rows[0].id;
      const position = await counters(client);
      return {
        tenants: pgTenantReads(this.pool, id),
        load: pgLoadReads(this.pool, ROWS_PER_CHUNK, id),
        position,
        release: async () => {
          try {
            await client.query('COMMIT');
            client.release();
          } catch (error) {
            client.release(error as Error);
          }
        },
      };
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  follow(from: ChangePosition, apply: Apply, failed: (error: unknown) => void): void {
    if (this.running) throw new Error('the changes are followed already');
    this.position = new Map(from);
    this.apply = apply;
    this.failed = failed;
    this.pollDue = true;
    this.running = this.loop();
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
    this.pruneTimer = setInterval(() => this.prune(), PRUNE_MS);
    this.pruneTimer.unref();
    void this.listen();
  }

  async caughtUp(): Promise<void> {
    const target = this.counted(await counters(this.pool));
    if (this.reached(target)) return;
    this.wake?.();
    return new Promise((resolve) => this.waiters.push({ target, resolve }));
  }

  /** Stops following: the change being applied is finished first. */
  async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.pruneTimer);
    this.wake?.();
    await this.running;
    await this.pruning;
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  /** Removes the changes older than RETENTION_MS (by the time each was logged). */
  private prune(): void {
    if (this.pruning || this.closed) return;
    this.pruning = this.pool
      .query(`DELETE FROM change_log WHERE (payload->>'at')::bigint < $1`, [Date.now() - RETENTION_MS])
      .then(
        () => undefined,
        (error: unknown) => {
          if (!this.closed) this.failed(error);
        },
      )
      .finally(() => (this.pruning = undefined));
  }

  private poll(): void {
    this.pollDue = true;
    this.wake?.();
  }

  /** Keeps the counters as read, and marks the tenants whose counter is past the position; returns them. */
  private counted(read: ChangePosition): ChangePosition {
    this.counters = read;
    for (const [tenantId, seq] of read)
      if ((this.position.get(tenantId) ?? 0) < seq) this.behind.add(tenantId);
    return read;
  }

  private reached(target: ChangePosition): boolean {
    for (const [tenantId, seq] of target) if ((this.position.get(tenantId) ?? 0) < seq) return false;
    return true;
  }

  /** LISTENs on a connection of its own; when it breaks, connects again and reads every counter. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, application_name: 'nextrec-changes' });
    const again = () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), RECONNECT_MS).unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', (message) => {
      // `origin tenantId`: this store's own changes are read with the next other change of the tenant.
      const payload = message.payload ?? '';
      const space = payload.indexOf(' ');
      if (payload.slice(0, space) === this.origin) return;
      this.behind.add(payload.slice(space + 1));
      this.wake?.();
    });
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      if (this.listener === client) this.failed(error);
      again();
      return;
    }
    if (this.closed) await client.end().catch(() => undefined);
    // Whatever was notified before the LISTEN took effect is found in the counters.
    this.poll();
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      if (this.pollDue) {
        this.pollDue = false;
        try {
          this.counted(await counters(this.pool));
        } catch (error) {
          if (!this.closed) this.failed(error);
        }
      }
      const tenants = [...this.behind];
      this.behind.clear();
      for (const tenantId of tenants) {
        if (this.closed) break;
        try {
          await this.follow1(tenantId);
        } catch (error) {
          // Tried again at the next poll, from the first change not applied.
          if (!this.closed) this.failed(error);
        }
      }
      this.waiters = this.waiters.filter((waiter) => {
        if (!this.reached(waiter.target)) return true;
        waiter.resolve();
        return false;
      });
      if (this.behind.size === 0 && !this.pollDue && !this.closed)
        await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /** Applies the tenant's changes past its position, in order, each once `apply` resolved for it. */
  private async follow1(tenantId: string): Promise<void> {
    for (;;) {
      const from = this.position.get(tenantId) ?? 0;
      const rows = await selectRows(
        this.pool,
        'SELECT seq, payload FROM change_log WHERE tenant_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [tenantId, from, CHANGES_PER_READ],
      );
      // The numbers have no gaps: one (or none left where the counter is ahead) means the log lost
      // changes this daemon had not applied.
      const counter = this.counters.get(tenantId) ?? 0;
      const first = rows.length > 0 ? Number(rows[0][0]) : counter > from ? counter + 1 : from + 1;
      if (first > from + 1) {
        this.failed(new ChangesLostError(tenantId, from, first));
        if (rows.length === 0) this.position.set(tenantId, counter);
      }
      for (const [seq, payload] of rows) {
        const { origin, ...change } = payload as LoggedChange;
        if (this.closed) return;
        if (origin !== this.origin) await this.apply(change as StoreChange);
        this.position.set(tenantId, Number(seq));
      }
      if (rows.length < CHANGES_PER_READ) return;
    }
  }
}
