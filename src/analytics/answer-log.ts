import { OneAtATime } from '../one-at-a-time.js';
import { readAnswerSummary, type AnswerSummary } from '../engine/answer-summary.js';
import type { AnswerCount, AnsweredItem, ServedUser } from '../store/api/analytics.js';
import { ALL_TENANTS } from '../store/api/runners.js';
import type { Store } from '../store/store.js';

/**
 * Rows held between writes (new counts, items and experiment users); beyond it, answers go unrecorded
 * until the next write (and are counted).
 */
const MAX_PENDING_ROWS = 20_000;
/** How often the held rows are written. */
const ANSWER_FLUSH_MS = 1_000;
const DAY_MS = 86_400_000;
/** Days of the record older than this are removed (docs/guide.md, "Analytics and experiments"). */
const ANSWER_RETENTION_DAYS = 400;

/**
 * The rows taken care of, per tenant and day: written already, or held for the next write; their keys
 * need not be held again. Kept for the current and the previous day; after a restart, those written
 * before it are learnt from the store (AnswerLog's `learnStored`).
 */
class WrittenToday {
  private readonly byDay = new Map<string, Set<string>>();
  /** The tenant and day `of` was last asked for, and their keys: the next answer is most likely theirs. */
  private last: { tenantId: string; day: number; keys: Set<string> } | undefined;

  /** The keys of a tenant's rows of a day taken care of (add one when its row is held). */
  of(tenantId: string, day: number): Set<string> {
    const { last } = this;
    if (last !== undefined && last.tenantId === tenantId && last.day === day) return last.keys;
    const dayKey = `${tenantId}\u0000${day}`;
    let keys = this.byDay.get(dayKey);
    if (keys === undefined) this.byDay.set(dayKey, (keys = new Set()));
    this.last = { tenantId, day, keys };
    return keys;
  }

  forgetBefore(day: number): void {
    this.last = undefined;
    for (const dayKey of this.byDay.keys()) {
      if (Number(dayKey.slice(dayKey.indexOf('\u0000') + 1)) < day) this.byDay.delete(dayKey);
    }
  }

  /** Forgets a tenant's keys that `matches`, every day. */
  forgetKeys(tenantId: string, matches: (key: string) => boolean): void {
    for (const [dayKey, keys] of this.byDay) {
      if (!dayKey.startsWith(`${tenantId}\u0000`)) continue;
      for (const key of keys) if (matches(key)) keys.delete(key);
    }
  }
}

/** The key of an experiment user's row among a day's (user ids last). */
function userKey(experiment: string, scenario: string, userId: string): string {
  return `${experiment}\u0000${scenario}\u0000${userId}`;
}

/**
 * The record of the answers recommendations gave (docs/guide.md, "Analytics and experiments"), as daily rollups: per tenant
 * and UTC day, the answers by scenario, algorithm and experiment, the items they returned (catalog
 * coverage) and the users each experiment variant served. Which algorithm an impression or a click
 * followed is in the recommId it carries (see recomm-id.ts), so no answer needs to be kept one by one:
 * the record grows with days, the catalog and the experiments' users, not with traffic.
 *
 * Each answer is rolled up as it is given: its day's count goes up, and only the rows not written yet
 * (an item or an experiment's user new to the day) are held. Those are written once a second beside the
 * write queue (the store's `answerRecordWrite`), so ingestion never waits for the record. Holding the
 * answers themselves until the write kept a second's answers alive through the event-loop thread's young
 * collections, which moved them to the old generation, whose collections then held requests up
 * (bench/latency). Bounded: beyond MAX_PENDING_ROWS rows held between two writes, what an answer would
 * add goes unrecorded (the answer is counted in `dropped`); its count still adds to a count held.
 */
export class AnswerLog {
  /** Answers per tenant, day, scenario, algorithm and experiment since the last write, by that key. */
  private counts = new Map<string, AnswerCount>();
  /** Items new to their day. */
  private items: AnsweredItem[] = [];
  /** Experiment users new to their day. */
  private users: ServedUser[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Writes and purges, one at a time. */
  private readonly writes = new OneAtATime();
  private lastPrune = 0;
  private readonly itemsWritten = new WrittenToday();
  private readonly usersWritten = new WrittenToday();
  /** Users deleted since the write in progress took its rows (tenant and user id). */
  private readonly forgottenMeanwhile = new Set<string>();
  /**
   * The summaries whose items the keys of a tenant's day (`itemsWritten`) all hold, by that set: the answer
   * cache gives the same summary again, whose items need not be looked up again that day.
   */
  private itemsTaken = new WeakMap<AnswerSummary, Set<string>>();
  /** The last answer's count key and what it was made of (`countKey`). */
  private lastCountKey:
    | { tenantId: string; day: number; scenario: string; algorithm: string; experiment: string; key: string }
    | undefined;
  /** Whether the rows written before this process started are known (`learnStored`). */
  private knowsStored = false;
  /** Answers recorded in part (rows beyond the bound) or not at all, since the daemon last said so. */
  dropped = 0;

  constructor(private readonly store: Store) {}

  /** Rows held for the next write. */
  get held(): number {
    return this.counts.size + this.items.length + this.users.length;
  }

  /**
   * The key of an answer's count: its tenant, day, scenario, algorithm and experiment. The last one is
   * kept and given again to the next answer of the same: most answers are, and a key written anew is
   * hashed anew by every lookup.
   */
  private countKey(
    tenantId: string,
    day: number,
    { scenario, algorithm, experiment }: AnswerSummary,
  ): string {
    const last = this.lastCountKey;
    if (
      last !== undefined &&
      last.tenantId === tenantId &&
      last.day === day &&
      last.scenario === scenario &&
      last.algorithm === algorithm &&
      last.experiment === experiment
    )
      return last.key;
    const key = `${tenantId}\u0000${day}\u0000${scenario}\u0000${algorithm}\u0000${experiment}`;
    this.lastCountKey = { tenantId, day, scenario, algorithm, experiment, key };
    return key;
  }

  /**
   * Records an answer given: what ranking said of it (engine/recommender.ts), or its text (the demo's
   * answers), read here; a text it cannot read goes unrecorded.
   */
  record(
    tenantId: string,
    userId: string | undefined,
    answer: string | AnswerSummary,
    ts = Date.now(),
  ): void {
    const summary = typeof answer === 'string' ? readAnswerSummary(answer) : answer;
    // Never on the request path: an answer that cannot be read goes unrecorded, and is counted.
    if (summary === undefined) {
      this.dropped++;
      return;
    }
    const day = Math.floor(ts / DAY_MS);
    const { scenario, algorithm, experiment } = summary;
    const key = this.countKey(tenantId, day, summary);
    const counted = this.counts.get(key);
    if (counted) counted[5]++;
    else if (this.held < MAX_PENDING_ROWS)
      this.counts.set(key, [tenantId, day, scenario, algorithm, experiment, 1]);
    else {
      this.dropped++;
      return;
    }
    // Rows beyond the bound are left out, their keys not taken, so that a later answer can hold them.
    let whole = true;
    const itemsWritten = this.itemsWritten.of(tenantId, day);
    if (this.itemsTaken.get(summary) !== itemsWritten) {
      for (const itemId of summary.itemIds) {
        if (itemsWritten.has(itemId)) continue;
        if (this.held >= MAX_PENDING_ROWS) {
          whole = false;
          break;
        }
        itemsWritten.add(itemId);
        this.items.push([tenantId, day, itemId]);
      }
      if (whole) this.itemsTaken.set(summary, itemsWritten);
    }
    // Who was served is kept only where an experiment needs it (its users per variant).
    if (experiment !== '' && userId !== undefined) {
      const usersWritten = this.usersWritten.of(tenantId, day);
      const user = userKey(experiment, scenario, userId);
      if (!usersWritten.has(user)) {
        if (this.held >= MAX_PENDING_ROWS) whole = false;
        else {
          usersWritten.add(user);
          this.users.push([tenantId, day, experiment, scenario, userId]);
        }
      }
    }
    if (!whole) this.dropped++;
  }

  /**
   * Drops the held rows of deleted users (the store's rows are deleted with the user's other rows; a
   * write already under way is followed by `purge`), and their keys, so that a user of the same id served
   * again is written again. What their answers added to the counts and the items is no one's.
   */
  forget(tenantId: string, identities: readonly string[]): void {
    const forgotten = new Set(identities);
    this.users = this.users.filter(([tenant, , , , userId]) => tenant !== tenantId || !forgotten.has(userId));
    for (const identity of identities) this.forgottenMeanwhile.add(`${tenantId}\u0000${identity}`);
    this.usersWritten.forgetKeys(tenantId, (key) =>
      identities.some((identity) => key.endsWith(`\u0000${identity}`)),
    );
  }

  /**
   * Drops the held rows of deleted items, and their keys, as `forget` does for users (docs/guide.md,
   * "Deleting items"); `purgeItems` then removes the written ones.
   */
  forgetItems(tenantId: string, itemIds: readonly string[]): void {
    const forgotten = new Set(itemIds);
    this.items = this.items.filter(([tenant, , itemId]) => tenant !== tenantId || !forgotten.has(itemId));
    this.itemsWritten.forgetKeys(tenantId, (key) => forgotten.has(key));
    // A summary may name one of them: its items are looked up again.
    this.itemsTaken = new WeakMap();
  }

  /**
   * Writes the held rows every ANSWER_FLUSH_MS, and says how many answers went unrecorded (in part or
   * whole) since the last write; only the daemon starts it.
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

  /**
   * Reads the rows already written for yesterday and today now, rather than before the first write (see
   * `learnStored`): the daemon does it before it reports ready, so that the first write after a restart
   * does not hold the event loop while the first requests arrive.
   */
  readStored(now = Date.now()): Promise<void> {
    return this.writes.run(async () => {
      if (!this.knowsStored) await this.learnStored(Math.floor(now / DAY_MS));
    });
  }

  /** Writes what is held now (and removes days past the retention, at most hourly). */
  flush(now = Date.now()): Promise<void> {
    return this.writes.run(() => this.write(now));
  }

  /**
   * Removes the rows of deleted users (and of the sessions merged into them) from the record, after the
   * write in progress: only this log writes its tables, so no other transaction changes their rows
   * meanwhile. Call it after `forget`, which keeps later writes from adding them again.
   */
  purge(tenantId: string, identities: readonly string[]): Promise<void> {
    if (identities.length === 0) return Promise.resolve();
    return this.writes.run(() => this.store.analytics.answerRecordForgetUsers(tenantId, identities));
  }

  /** Removes the rows of deleted items from the record, after the write in progress (see `purge`). */
  purgeItems(tenantId: string, itemIds: readonly string[]): Promise<void> {
    if (itemIds.length === 0) return Promise.resolve();
    return this.writes.run(() => this.store.analytics.answerRecordForgetItems(tenantId, itemIds));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(now: number): Promise<void> {
    if (!this.knowsStored) await this.learnStored(Math.floor(now / DAY_MS));
    const { counts, items, users } = this;
    this.counts = new Map();
    this.items = [];
    this.users = [];
    this.forgottenMeanwhile.clear();
    const today = Math.floor(now / DAY_MS);
    this.itemsWritten.forgetBefore(today - 1);
    this.usersWritten.forgetBefore(today - 1);
    let removeBefore: number | undefined;
    if (now - this.lastPrune > 3_600_000) {
      this.lastPrune = now;
      // Among daemons sharing the store, the one that claimed the retention removes old days, for all
      // tenants (docs/batch-models.md, "Cluster mode").
      if (await this.store.runners.claim('retention', ALL_TENANTS))
        removeBefore = today - ANSWER_RETENTION_DAYS;
    }
    if (counts.size === 0 && items.length === 0 && users.length === 0 && removeBefore === undefined) return;
    // Only this log writes its tables (a user's deletion goes through `purge`).
    await this.store.analytics
      .answerRecordWrite({ counts: [...counts.values()], items, users, removeBefore })
      .catch((error: unknown) => {
        this.holdAgain(counts, items, users);
        throw error;
      });
  }

  /**
   * Learns the item and experiment-user rows already written for yesterday and today (by this process
   * before a restart), once, before the first write: held rows among them are dropped, and answers naming
   * them later hold none. Each write can then insert what it holds as it is. Looking each row up among
   * its day's rows instead (an anti-join in every write) read all of the day's rows once a second, a
   * cost that grew through the day with the catalog's items shown (docs/memory.md).
   */
  private async learnStored(today: number): Promise<void> {
    const { items, users } = await this.store.analytics.answerRecordRows(today - 1);
    // A held row and a stored one are the same row when their values join to the same key.
    const storedItems = new Set<string>();
    const storedUsers = new Set<string>();
    for (const row of items) {
      const [tenantId, day, itemId] = row;
      this.itemsWritten.of(tenantId, day).add(itemId);
      storedItems.add(row.join('\u0000'));
    }
    for (const row of users) {
      const [tenantId, day, experiment, scenario, userId] = row;
      // A user deleted while this read ran: its rows are being purged, and may be written again.
      if (this.forgottenMeanwhile.has(`${tenantId}\u0000${userId}`)) continue;
      this.usersWritten.of(tenantId, day).add(userKey(experiment, scenario, userId));
      storedUsers.add(row.join('\u0000'));
    }
    this.items = this.items.filter((row) => !storedItems.has(row.join('\u0000')));
    this.users = this.users.filter((row) => !storedUsers.has(row.join('\u0000')));
    this.knowsStored = true;
  }

  /**
   * A write failed: its rows are held again for the next one (but those of users deleted meanwhile),
   * beside what was held since. Rows beyond the bound are left to a later answer naming them.
   */
  private holdAgain(counts: Map<string, AnswerCount>, items: AnsweredItem[], users: ServedUser[]): void {
    for (const [key, row] of counts) {
      const counted = this.counts.get(key);
      if (counted) counted[5] += row[5];
      else if (this.held < MAX_PENDING_ROWS) this.counts.set(key, row);
    }
    for (const row of items) {
      if (this.held < MAX_PENDING_ROWS) this.items.push(row);
      else this.itemsWritten.of(row[0], row[1]).delete(row[2]);
    }
    for (const row of users) {
      const [tenantId, day, experiment, scenario, userId] = row;
      if (this.forgottenMeanwhile.has(`${tenantId}\u0000${userId}`)) continue;
      const keys = this.usersWritten.of(tenantId, day);
      const key = userKey(experiment, scenario, userId);
      if (this.held < MAX_PENDING_ROWS) {
        keys.add(key);
        this.users.push(row);
      } else keys.delete(key);
    }
  }
}
