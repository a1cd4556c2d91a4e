/**
 * The analytics area (docs/guide.md, "Analytics and experiments"): what the analytics routes and an
 * experiment's results read of the store over a window, and the record of answers, which the daemon
 * writes for itself beside the write queue (docs/memory.md). A day is a UTC day number: epoch ms divided
 * by 86,400,000, rounded down.
 */

/** The events with `fromMs` ≤ ts < `untilMs` (epoch ms), and the record's days they cover. */
export interface EventWindow {
  fromMs: number;
  untilMs: number;
}

/** A type's interactions, and the sums of their prices and of their profits (0 without any). */
export interface TypeTotal {
  type: string;
  count: number;
  price: number;
  profit: number;
}

export interface SummaryFigures {
  /** Only the types with interactions in the window. */
  types: TypeTotal[];
  /** Distinct users (and sessions) that interacted. */
  users: number;
  /** Item impressions: an impression counts once per item it showed. */
  impressions: number;
}

export interface DayCount {
  day: number;
  count: number;
}

export interface ItemCount {
  itemId: string;
  count: number;
}

/** What an item's recommendations led to: impressions, and the clicks, carts and purchases after them. */
export interface ItemFunnel {
  itemId: string;
  impressions: number;
  clicks: number;
  carts: number;
  purchases: number;
}

/** A scenario's day: item impressions, clicks, carts, purchases and revenue (docs/guide.md, "Revenue"). */
export interface ScenarioDay {
  day: number;
  impressions: number;
  clicks: number;
  carts: number;
  purchases: number;
  revenue: number;
}

/** Counts by algorithm code: the first four characters of a recommId (src/engine/recomm-id.ts). */
export interface CodeCount {
  code: string;
  count: number;
}

export interface AlgorithmFigures {
  /** The answers each algorithm gave, from the record of answers. */
  answers: { algorithm: string; answers: number }[];
  /** Item impressions whose recommId names an algorithm. */
  impressions: CodeCount[];
  /** Clicks whose recommId names an algorithm. */
  clicks: CodeCount[];
}

/**
 * What an experiment's variants did, by their scenarios (only those with rows): impressions and actions
 * logged with the scenario, and its purchases (credited as docs/guide.md, "Revenue", says) against the
 * users it served.
 */
export interface ExperimentFigures {
  impressions: { scenario: string; impressions: number }[];
  actions: { scenario: string; clicks: number; purchases: number }[];
  spending: {
    scenario: string;
    /** The users the variant served. */
    users: number;
    revenue: number;
    /** What each user it served or who bought through it spent: size, mean, (n − 1) variance. */
    count: number;
    mean: number;
    variance: number;
  }[];
}

/**
 * What the analytics of a tenant read over a window; merged identities' copies of session events are
 * left out (their originals count), and clicks are views that carry a scenarioSlug.
 */
export interface AnalyticsReads {
  summary(tenantId: string, window: EventWindow): Promise<SummaryFigures>;
  /** Interactions per day, days without any left out. */
  interactionsByDay(tenantId: string, window: EventWindow): Promise<DayCount[]>;
  interactionTotals(tenantId: string, window: EventWindow): Promise<TypeTotal[]>;
  /** The `limit` items with the most interactions, most first, ties in item-id order. */
  topItems(tenantId: string, window: EventWindow, limit: number): Promise<ItemCount[]>;
  /** The distinct items answers returned on the window's days. */
  itemsAnswered(tenantId: string, window: EventWindow): Promise<number>;
  /**
   * The `limit` items most shown by recommendations (of `scenario`, or of any), with what followed their
   * impressions; most shown first, then most clicked, most bought, in item-id order.
   */
  itemFunnels(
    tenantId: string,
    window: EventWindow,
    limit: number,
    scenario: string | undefined,
  ): Promise<ItemFunnel[]>;
  /** A scenario's days with any of its figures. */
  scenarioDays(tenantId: string, window: EventWindow, scenario: string): Promise<ScenarioDay[]>;
  algorithmFigures(tenantId: string, window: EventWindow): Promise<AlgorithmFigures>;
  /** `scenarios`: the experiment's variants' scenarios. */
  experimentFigures(
    tenantId: string,
    window: EventWindow,
    experiment: string,
    scenarios: readonly string[],
  ): Promise<ExperimentFigures>;
}

/** A count of answers of a tenant's day by scenario, algorithm and experiment ('' for none). */
export type AnswerCount = [
  tenantId: string,
  day: number,
  scenario: string,
  algorithm: string,
  experiment: string,
  answers: number,
];

/** An item answers of a tenant's day returned. */
export type AnsweredItem = [tenantId: string, day: number, itemId: string];

/** A user an experiment's variant (a scenario) served on a tenant's day. */
export type ServedUser = [
  tenantId: string,
  day: number,
  experiment: string,
  scenario: string,
  userId: string,
];

/** One write of the record of answers. */
export interface AnswerRecordWrite {
  /** Added to the counts of their days. */
  counts: readonly AnswerCount[];
  /** Rows new to their days: the record holds each once, and the writer knows which it wrote. */
  items: readonly AnsweredItem[];
  users: readonly ServedUser[];
  /** When given, the days before this one are removed (the record's retention). */
  removeBefore?: number;
}

/**
 * The record of answers (src/analytics/answer-log.ts), written beside the write queue: each write commits
 * in a transaction of its own without waiting for the queue, so that ingestion never waits for the record
 * either, as it did when each write took the queue for 20 to 75 ms under load. Only the record writes its
 * rows, so no queued write conflicts with one of its writes; like a read, a write waits while the store
 * is rewritten (scrub), and the store waits for it to end before closing.
 */
export interface AnswerRecordStore {
  /** The items and experiment users the record holds for days from `fromDay` on. */
  answerRecordRows(fromDay: number): Promise<{ items: AnsweredItem[]; users: ServedUser[] }>;
  answerRecordWrite(write: AnswerRecordWrite): Promise<void>;
  /** Removes deleted users' rows (their counts and items are no one's). */
  answerRecordForgetUsers(tenantId: string, userIds: readonly string[]): Promise<void>;
  /** Removes deleted items' rows. */
  answerRecordForgetItems(tenantId: string, itemIds: readonly string[]): Promise<void>;
}

export type AnalyticsStore = AnalyticsReads & AnswerRecordStore;
