import type { Store } from '../store/database.js';
import type { Statement } from '../store/rows.js';

/** Answers held between writes; beyond it, answers go unrecorded until the next write (and are counted). */
const MAX_PENDING_ANSWERS = 20_000;
/** How often held answers are written. */
const ANSWER_FLUSH_MS = 1_000;
/** Answer records older than this are removed (README, "Analytics"). */
const ANSWER_RETENTION_MS = 90 * 86_400_000;
/** Rows per INSERT statement. */
const ROWS_PER_STATEMENT = 500;

interface PendingAnswer {
  tenantId: string;
  recommId: string;
  ts: number;
  userId: string | undefined;
  /** The rendered answer, read only when it is written. */
  body: string;
}

/**
 * What an answer says of itself: its item ids, algorithm, scenario and experiment. The answer as rendered
 * ends before its recommId (see withRecommId), so a closing brace makes it whole; read when written, not
 * when served.
 */
function answerFields(body: string): {
  itemIds: string[];
  algorithm: string | null;
  scenario: string | null;
  experiment: string | null;
} {
  const answer = JSON.parse(`${body}}`) as {
    items: { itemId: string }[];
    algorithm?: string;
    scenario?: string;
    experiment?: { slug: string };
  };
  return {
    itemIds: answer.items.map((item) => item.itemId),
    algorithm: answer.algorithm ?? null,
    scenario: answer.scenario ?? null,
    experiment: answer.experiment?.slug ?? null,
  };
}

/**
 * A compact record of every answer recommendations gave (README, "Analytics"): held in memory as given,
 * and written in batches once a second through the write queue, so a request only appends to a list.
 * Bounded: answers beyond MAX_PENDING_ANSWERS between two writes are not recorded (counted in `dropped`).
 */
export class AnswerLog {
  private pending: PendingAnswer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private lastPrune = 0;
  dropped = 0;

  constructor(private readonly store: Store) {}

  record(
    tenantId: string,
    recommId: string,
    userId: string | undefined,
    body: string,
    ts = Date.now(),
  ): void {
    if (this.pending.length >= MAX_PENDING_ANSWERS) {
      this.dropped++;
      return;
    }
    this.pending.push({ tenantId, recommId, ts, userId, body });
  }

  /** Drops the held answers of deleted users (the store's are deleted with the user's other rows). */
  forget(tenantId: string, identities: readonly string[]): void {
    const forgotten = new Set(identities);
    this.pending = this.pending.filter(
      (answer) =>
        answer.tenantId !== tenantId || answer.userId === undefined || !forgotten.has(answer.userId),
    );
  }

  /**
   * Writes held answers every ANSWER_FLUSH_MS, and says how many went unrecorded since the last write;
   * only the daemon starts it.
   */
  start(onError: (error: unknown) => void, onDropped: (count: number) => void): void {
    this.timer = setInterval(() => {
      if (this.dropped > 0) {
        onDropped(this.dropped);
        this.dropped = 0;
      }
      this.flush().catch(onError);
    }, ANSWER_FLUSH_MS);
    this.timer.unref();
  }

  /** Writes what is held now (and removes records past the retention, at most hourly). */
  flush(now = Date.now()): Promise<void> {
    this.writing = (this.writing ?? Promise.resolve()).then(() => this.write(now));
    return this.writing;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(now: number): Promise<void> {
    const answers = this.pending;
    this.pending = [];
    const statements: Statement[] = [];
    for (let start = 0; start < answers.length; start += ROWS_PER_STATEMENT) {
      const chunk = answers.slice(start, start + ROWS_PER_STATEMENT);
      const params: (string | number | null)[] = [];
      const values = chunk.map((answer) => {
        const fields = answerFields(answer.body);
        const at = params.length;
        params.push(
          answer.tenantId,
          answer.recommId,
          answer.ts,
          // Who was served is kept only where an experiment needs it (its users per variant).
          fields.experiment === null ? null : (answer.userId ?? null),
          fields.scenario,
          fields.algorithm,
          fields.experiment,
          JSON.stringify(fields.itemIds),
        );
        return `(${Array.from({ length: 8 }, (_, i) => `$${at + i + 1}`).join(', ')})`;
      });
      statements.push({ sql: `INSERT INTO answers VALUES ${values.join(', ')}`, params });
    }
    if (now - this.lastPrune > 3_600_000) {
      this.lastPrune = now;
      statements.push({ sql: 'DELETE FROM answers WHERE ts < $1', params: [now - ANSWER_RETENTION_MS] });
    }
    if (statements.length === 0) return;
    await this.store.writes.submit((rows) => {
      rows.statements.push(...statements);
      return () => undefined;
    });
  }
}
