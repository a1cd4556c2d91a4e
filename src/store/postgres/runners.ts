import pg from 'pg';
import { OneAtATimePerKey } from '../../one-at-a-time.js';
import type { RunnerClaim, RunnerKind, Runners } from '../api/runners.js';
import { runnerKey } from '../single-process-runners.js';

/**
 * Settings of the runners' session: the server probes a silent client after 5 s, every 2 s, and ends
 * its session after 3 unanswered probes, so that the claims of a daemon whose machine went away (no
 * process left to close the connection) are released within about 11 s; and the session is never ended
 * for being idle, which would drop its claims.
 */
const SESSION_OPTIONS = [
  'tcp_keepalives_idle=5',
  'tcp_keepalives_interval=2',
  'tcp_keepalives_count=3',
  'idle_session_timeout=0',
  'statement_timeout=0',
]
  .map((setting) => `-c ${setting}`)
  .join(' ');

/** How long `exclusive` waits between two tries of a lock another process holds. */
const RETRY_MS = 100;

/** The advisory lock of a key: a 64-bit hash of its text (two keys sharing one only run apart). */
const TRY_LOCK = "SELECT pg_try_advisory_lock(hashtextextended('nextrec runner ' || $1, 0)) AS granted";
const UNLOCK = "SELECT pg_advisory_unlock(hashtextextended('nextrec runner ' || $1, 0))";

/**
 * Runners among the daemons sharing a PostgreSQL database (src/store/api/runners.ts): each claim and each
 * `exclusive` task is a session-level advisory lock of one connection this store keeps apart from its
 * pool, for the locks alone. PostgreSQL releases a session's locks when its connection ends, so a daemon
 * that stops, or is killed mid-task, leaves nothing held: its connection closes with its process. Waiting
 * for a lock tries it again every RETRY_MS rather than blocking, so that the session stays free for the
 * other locks' statements. The session must reach the server itself (or through session pooling): a
 * transaction-pooling proxy would hand the locks to whichever session ran the statement.
 */
export class PgRunners implements Runners {
  private session: Promise<pg.Client> | undefined;
  /** The connected session, while it lasts. */
  private client: pg.Client | undefined;
  private readonly claimed = new Map<string, RunnerClaim>();
  private readonly claiming = new Map<string, Promise<boolean>>();
  private readonly tasks = new OneAtATimePerKey();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly retryMs = RETRY_MS,
    /** Told when the session ended by itself, and every claim with it. */
    private readonly lostSession: (error?: Error) => void = () => undefined,
  ) {}

  claim(kind: RunnerKind, tenantId: string): Promise<boolean> {
    const key = runnerKey(kind, tenantId);
    if (this.closed) return Promise.resolve(false);
    if (this.claimed.has(key)) return Promise.resolve(true);
    let claiming = this.claiming.get(key);
    if (!claiming) {
      claiming = this.tryLock(key)
        .then((client) => {
          if (client && client === this.client) this.claimed.set(key, { kind, tenantId });
          return client !== undefined;
        })
        // An unreachable server grants nothing: the work waits for the next time it is asked for.
        .catch(() => false)
        .finally(() => this.claiming.delete(key));
      this.claiming.set(key, claiming);
    }
    return claiming;
  }

  exclusive<T>(kind: RunnerKind, tenantId: string, task: () => Promise<T>): Promise<T> {
    const key = runnerKey(kind, tenantId);
    return this.tasks.run(key, async () => {
      const client = await this.lock(key);
      try {
        return await task();
      } finally {
        // A session lost meanwhile took the lock with it.
        if (client === this.client) await client.query(UNLOCK, [key]).catch(() => undefined);
      }
    });
  }

  claims(): RunnerClaim[] {
    return [...this.claimed.values()];
  }

  /** Ends the session, which releases every claim and lock of this process. */
  async close(): Promise<void> {
    this.closed = true;
    await this.tasks.ended();
    const session = this.session;
    this.session = undefined;
    this.client = undefined;
    this.claimed.clear();
    const client = await session?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }

  /** Waits until the key's lock is this session's; throws once the store is closed. */
  private async lock(key: string): Promise<pg.Client> {
    for (;;) {
      if (this.closed) throw new Error('the store is closed');
      const client = await this.tryLock(key).catch(() => undefined);
      if (client) return client;
      await new Promise((resolve) => setTimeout(resolve, this.retryMs));
    }
  }

  /** The session when it took the key's lock; undefined while another session holds it. */
  private async tryLock(key: string): Promise<pg.Client | undefined> {
    const client = await this.connect();
    const { rows } = await client.query<{ granted: boolean }>(TRY_LOCK, [key]);
    return rows[0].granted ? client : undefined;
  }

  private connect(): Promise<pg.Client> {
    this.session ??= this.open().catch((error: unknown) => {
      this.session = undefined;
      throw error;
    });
    return this.session;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'nextrec runners',
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      options: SESSION_OPTIONS,
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    await client.connect();
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('the store is closed');
    }
    this.client = client;
    return client;
  }

  /** The session ended (the server restarted, the network broke): its claims and locks are gone. */
  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.session = undefined;
    this.claimed.clear();
    if (!this.closed) this.lostSession(error);
    void client.end().catch(() => undefined);
  }
}
