import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticsStore, AnswerRecordWrite, EventWindow } from '../../../src/store/api/analytics.js';
import { AppliedThenFailedError, type FeedStore, type StagedRecord } from '../../../src/store/api/feeds.js';
import { pgAnalytics } from '../../../src/store/postgres/analytics.js';
import { pgFeedStore } from '../../../src/store/postgres/feeds.js';
import { migratePostgres } from '../../../src/store/postgres/migrations.js';
import { catalogItemFromRow, type CatalogItem } from '../../../src/store/row-mapping.js';
import {
  RowBuffer,
  rowKey,
  type StoredImpression,
  type StoredInteraction,
  type StoredItem,
} from '../../../src/store/rows.js';
import { flushTo, startPostgres, type TestPostgres } from '../../support/postgres.js';
import { closeTempStore, openTempStore, storedInteraction } from '../../support/temp-store.js';

/**
 * The analytics reads, the record of answers and the feed staging of both stores, on the same data written
 * through each store's write path: every read gives the same figures on DuckDB and on PostgreSQL.
 */

/** One store under test, as the suite uses it. */
interface Subject {
  analytics: AnalyticsStore;
  feeds: FeedStore;
  /** Commits one flush of rows. */
  write(fill: (rows: RowBuffer) => void): Promise<void>;
  /** The tenant's items, in id order. */
  items(tenantId: string): Promise<CatalogItem[]>;
  /** Makes a staging's records vanish, as a store's failure would (its TEMP table goes). */
  loseStaging(): Promise<void>;
  close(): Promise<void>;
}

const ITEM_SELECT = (attributes: string) =>
  `SELECT external_id, category, ${attributes}, expires_at, available, feed_managed, created_at, updated_at
     FROM items WHERE tenant_id = $1 ORDER BY external_id`;

async function duckDbSubject(): Promise<Subject> {
  const temp = await openTempStore('nextrec-pg-reads-b-');
  const { store } = temp;
  return {
    analytics: store.analytics,
    feeds: store.feeds,
    write: (fill) =>
      store.writes.submit((rows) => {
        fill(rows);
        return () => undefined;
      }),
    items: (tenantId) =>
      store.read(async (db) =>
        (await db.runAndReadAll(ITEM_SELECT('attributes::VARCHAR'), [tenantId]))
          .getRowsJS()
          .map((row) => catalogItemFromRow(row)),
      ),
    // A scrub opens the store file again: the write connection's TEMP tables are gone.
    loseStaging: () => store.scrub(),
    close: () => closeTempStore(temp),
  };
}

let server: TestPostgres;
let databases = 0;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server?.stop();
});

/** A pool of a new database of the cluster, migrated. */
async function migratedPool(): Promise<pg.Pool> {
  const name = `reads_${++databases}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: server.url.replace(/[^/]+$/, name), max: 4 });
  const migrating = await pool.connect();
  await migratePostgres(migrating);
  migrating.release();
  return pool;
}

/** The write queue's exclusive tasks, one after another (the tests write nothing meanwhile). */
function exclusiveTasks() {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    exclusive<T>(task: () => Promise<T>): Promise<T> {
      const run = queue.then(task, task);
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

async function pgItems(pool: pg.Pool, tenantId: string): Promise<CatalogItem[]> {
  const found = await pool.query<unknown[]>({
    text: ITEM_SELECT('attributes::text'),
    values: [tenantId],
    rowMode: 'array',
  });
  return found.rows.map((row) => catalogItemFromRow(row));
}

async function postgresSubject(): Promise<Subject> {
  const pool = await migratedPool();
  return {
    analytics: pgAnalytics(pool),
    feeds: pgFeedStore(pool, exclusiveTasks()),
    write: flushTo(pool),
    items: (tenantId) => pgItems(pool, tenantId),
    // The connection holding the staging ends (the server restarted, the network failed).
    loseStaging: async () => {
      const ended = await pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE query LIKE 'INSERT INTO feed_stage_%' AND pid <> pg_backend_pid()`,
      );
      expect(ended.rowCount).toBe(1);
      // Until the held connection has heard of its end.
      await new Promise((resolve) => setTimeout(resolve, 100));
    },
    close: () => pool.end(),
  };
}

const DAY = 86_400_000;
/** The first day of the window. */
const D = 20_000;
const at = (day: number, hour: number) => day * DAY + hour * 3_600_000;
const WINDOW: EventWindow = { fromMs: D * DAY, untilMs: (D + 2) * DAY };

function interaction(
  eventId: string,
  day: number,
  hour: number,
  fields: Partial<StoredInteraction>,
): StoredInteraction {
  return storedInteraction(eventId, { ts: at(day, hour), receivedAt: at(day, hour), ...fields });
}

function impression(
  eventId: string,
  day: number,
  hour: number,
  itemIds: string[],
  fields: Partial<StoredImpression>,
): StoredImpression {
  return {
    eventId,
    userId: 'u1',
    itemIds,
    scenarioSlug: null,
    country: null,
    recommId: null,
    ts: at(day, hour),
    receivedAt: at(day, hour),
    ...fields,
  };
}

/**
 * Tenant `t`'s events: in the window (days D and D + 1), before it and after it, a merged copy, and
 * another tenant's. Purchases are credited to `home` by their slug (e11), by a recommId of an answer of
 * it in the window (e5, through m1) and before it (e13, through m6).
 */
const INTERACTIONS: [string, StoredInteraction][] = [
  ['t', interaction('e1', D, 1, { userId: 'u1', itemId: 'i1', scenarioSlug: 'home', recommId: 'als1-a' })],
  ['t', interaction('e2', D, 2, { userId: 'u1', itemId: 'i1', scenarioSlug: 'home', recommId: 'als1-a' })],
  [
    't',
    interaction('e3', D + 1, 1, { userId: 'u2', itemId: 'i2', scenarioSlug: 'home', recommId: 'pop1-b' }),
  ],
  [
    't',
    interaction('e4', D + 1, 2, {
      userId: null,
      sessionId: 's1',
      itemId: 'i2',
      type: 'cart',
      scenarioSlug: 'home',
    }),
  ],
  [
    't',
    interaction('e5', D + 1, 3, {
      userId: 'u2',
      itemId: 'i2',
      type: 'purchase',
      recommId: 'als1-a',
      amount: 1,
      price: 19.5,
      profit: 4.25,
    }),
  ],
  [
    't',
    interaction('e6', D, 3, {
      userId: 'u3',
      itemId: 'i3',
      type: 'purchase',
      scenarioSlug: 'side',
      price: 10,
      profit: 2,
    }),
  ],
  ['t', interaction('e7', D, 4, { userId: 'u1', itemId: 'i3', scenarioSlug: 'home', merged: true })],
  ['t', interaction('e8', D - 1, 23, { userId: 'u1', itemId: 'i1', scenarioSlug: 'home' })],
  ['t', interaction('e9', D + 1, 4, { userId: 'u1', itemId: 'i4', type: 'rating' })],
  ['t', interaction('e10', D, 5, { userId: 'u4', itemId: 'i3', scenarioSlug: 'side', recommId: 'als1-s' })],
  [
    't',
    interaction('e11', D + 1, 5, {
      userId: 'u5',
      itemId: 'i1',
      type: 'purchase',
      scenarioSlug: 'home',
      price: 5.5,
      profit: 1,
    }),
  ],
  ['t', interaction('e12', D + 2, 0, { userId: 'u3', itemId: 'i2' })],
  [
    't',
    interaction('e13', D, 6, {
      userId: 'u6',
      itemId: 'i1',
      type: 'purchase',
      recommId: 'old1-x',
      price: 7,
      profit: 0,
    }),
  ],
  ['t', interaction('e14', D + 1, 6, { userId: 'u1', itemId: 'i2', type: 'bookmark' })],
  ['t', interaction('e15', D + 1, 8, { userId: 'u1', itemId: 'i4', scenarioSlug: 'side' })],
  [
    'other',
    interaction('o1', D, 1, { userId: 'u1', itemId: 'i1', scenarioSlug: 'home', recommId: 'als1-a' }),
  ],
];

const IMPRESSIONS: [string, StoredImpression][] = [
  ['t', impression('m1', D, 0, ['i1', 'i2', 'i3'], { scenarioSlug: 'home', recommId: 'als1-a' })],
  ['t', impression('m2', D + 1, 0, ['i2'], { userId: 'u2', scenarioSlug: 'home', recommId: 'pop1-b' })],
  ['t', impression('m3', D, 1, ['i3', 'i1'], { userId: 'u3', scenarioSlug: 'side', recommId: 'als1-s' })],
  ['t', impression('m4', D, 2, ['i4'], {})],
  ['t', impression('m5', D + 2, 1, ['i1'], { scenarioSlug: 'home', recommId: 'als1-z' })],
  ['t', impression('m6', D - 1, 1, ['i1'], { userId: 'u2', scenarioSlug: 'home', recommId: 'old1-x' })],
  ['other', impression('m1', D, 0, ['i1'], { scenarioSlug: 'home', recommId: 'als1-a' })],
];

/** The record of answers, in two writes (the second adds to a count of the first). */
const ANSWER_WRITES: AnswerRecordWrite[] = [
  {
    counts: [
      ['t', D, 'home', 'als', '', 3],
      ['t', D + 1, 'home', 'pop', 'exp', 2],
      ['t', D + 3, '', 'als', '', 9],
      ['other', D, 'home', 'als', '', 5],
    ],
    items: [
      ['t', D, 'i1'],
      ['t', D, 'i2'],
      ['t', D + 1, 'i3'],
      ['t', D + 3, 'i9'],
      ['other', D, 'i7'],
    ],
    users: [
      ['t', D, 'exp', 'home', 'u1'],
      ['t', D, 'exp', 'home', 'u2'],
      ['t', D + 1, 'exp', 'side', 'u3'],
      ['t', D, 'exp', 'side', 'u4'],
      ['t', D + 3, 'exp', 'home', 'u9'],
      ['t', D, 'another', 'home', 'u8'],
    ],
  },
  {
    counts: [['t', D, 'home', 'als', '', 1]],
    items: [['t', D + 1, 'i1']],
    users: [['t', D + 1, 'exp', 'home', 'u1']],
  },
];

const byKey =
  <T>(key: (row: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
const sorted = <T>(rows: readonly T[], key: (row: T) => string) => [...rows].sort(byKey(key));

function item(externalId: string, fields: Partial<StoredItem>): StoredItem {
  return {
    externalId,
    category: null,
    attributes: {},
    expiresAt: null,
    available: true,
    feedManaged: true,
    createdAt: 1,
    updatedAt: 1,
    ...fields,
  };
}

function mapped(
  externalId: string,
  attributes: Record<string, unknown>,
  category?: string | null,
): StagedRecord {
  return {
    mapped: true,
    item: category === undefined ? { externalId, attributes } : { externalId, category, attributes },
  };
}

/** What every read gave, by store: compared once both ran. */
const results = new Map<string, Map<string, unknown>>();

describe.each([
  ['DuckDB', duckDbSubject],
  ['PostgreSQL', postgresSubject],
])('the analytics and feeds of the %s store', (name, open) => {
  let subject: Subject;
  const found = new Map<string, unknown>();
  results.set(name, found);
  /** Records what a read gave, for the comparison of the stores. */
  const seen = <T>(read: string, value: T): T => {
    found.set(read, value);
    return value;
  };

  beforeAll(async () => {
    subject = await open();
    await subject.write((rows) => {
      rows.interactions.push(...INTERACTIONS);
      rows.impressions.push(...IMPRESSIONS);
    });
    for (const write of ANSWER_WRITES) await subject.analytics.answerRecordWrite(write);
  }, 60_000);

  afterAll(async () => {
    await subject?.close();
  });

  it('sums up the window: interactions by type with prices and profits, identities, item impressions', async () => {
    const summary = seen('summary', await subject.analytics.summary('t', WINDOW));
    const types = [
      { type: 'bookmark', count: 1, price: 0, profit: 0 },
      { type: 'cart', count: 1, price: 0, profit: 0 },
      { type: 'purchase', count: 4, price: 42, profit: 7.25 },
      { type: 'rating', count: 1, price: 0, profit: 0 },
      { type: 'view', count: 5, price: 0, profit: 0 },
    ];
    expect({ ...summary, types: sorted(summary.types, (t) => t.type) }).toEqual({
      types,
      users: 7,
      impressions: 7,
    });
    const totals = seen('interactionTotals', await subject.analytics.interactionTotals('t', WINDOW));
    expect(sorted(totals, (t) => t.type)).toEqual(types);
    expect(await subject.analytics.summary('nobody', WINDOW)).toEqual({
      types: [],
      users: 0,
      impressions: 0,
    });
  });

  it('counts interactions by UTC day, and the top items with ties in id order', async () => {
    const days = seen('interactionsByDay', await subject.analytics.interactionsByDay('t', WINDOW));
    expect(sorted(days, (d) => String(d.day))).toEqual([
      { day: D, count: 5 },
      { day: D + 1, count: 7 },
    ]);
    expect(seen('topItems 3', await subject.analytics.topItems('t', WINDOW, 3))).toEqual([
      { itemId: 'i1', count: 4 },
      { itemId: 'i2', count: 4 },
      { itemId: 'i3', count: 2 },
    ]);
    expect(seen('topItems 1', await subject.analytics.topItems('t', WINDOW, 1))).toEqual([
      { itemId: 'i1', count: 4 },
    ]);
    expect(seen('itemsAnswered', await subject.analytics.itemsAnswered('t', WINDOW))).toBe(3);
  });

  it('gives the items recommendations showed most, with what followed, of any scenario or of one', async () => {
    const any = seen('itemFunnels any', await subject.analytics.itemFunnels('t', WINDOW, 10, undefined));
    expect(any).toEqual([
      { itemId: 'i1', impressions: 2, clicks: 2, carts: 0, purchases: 1 },
      { itemId: 'i3', impressions: 2, clicks: 1, carts: 0, purchases: 1 },
      { itemId: 'i2', impressions: 2, clicks: 1, carts: 1, purchases: 0 },
      { itemId: 'i4', impressions: 0, clicks: 1, carts: 0, purchases: 0 },
    ]);
    // Once `limit` items were shown, items never shown are not counted.
    expect(seen('itemFunnels any 2', await subject.analytics.itemFunnels('t', WINDOW, 2, undefined))).toEqual(
      any.slice(0, 2),
    );
    expect(seen('itemFunnels home', await subject.analytics.itemFunnels('t', WINDOW, 10, 'home'))).toEqual([
      { itemId: 'i2', impressions: 2, clicks: 1, carts: 1, purchases: 0 },
      { itemId: 'i1', impressions: 1, clicks: 2, carts: 0, purchases: 1 },
      { itemId: 'i3', impressions: 1, clicks: 0, carts: 0, purchases: 0 },
    ]);
    expect(seen('itemFunnels side', await subject.analytics.itemFunnels('t', WINDOW, 10, 'side'))).toEqual([
      { itemId: 'i3', impressions: 1, clicks: 1, carts: 0, purchases: 1 },
      { itemId: 'i1', impressions: 1, clicks: 0, carts: 0, purchases: 0 },
      { itemId: 'i4', impressions: 0, clicks: 1, carts: 0, purchases: 0 },
    ]);
  });

  it("gives a scenario's days, its revenue credited by slug and by the answers it gave", async () => {
    const home = seen('scenarioDays home', await subject.analytics.scenarioDays('t', WINDOW, 'home'));
    expect(sorted(home, (d) => String(d.day))).toEqual([
      { day: D, impressions: 3, clicks: 2, carts: 0, purchases: 0, revenue: 7 },
      { day: D + 1, impressions: 1, clicks: 1, carts: 1, purchases: 1, revenue: 25 },
    ]);
    const side = seen('scenarioDays side', await subject.analytics.scenarioDays('t', WINDOW, 'side'));
    expect(sorted(side, (d) => String(d.day))).toEqual([
      { day: D, impressions: 2, clicks: 1, carts: 0, purchases: 1, revenue: 10 },
      { day: D + 1, impressions: 0, clicks: 1, carts: 0, purchases: 0, revenue: 0 },
    ]);
    expect(await subject.analytics.scenarioDays('t', WINDOW, 'none')).toEqual([]);
  });

  it('gives the answers, impressions and clicks of each algorithm', async () => {
    const figures = seen('algorithmFigures', await subject.analytics.algorithmFigures('t', WINDOW));
    expect({
      answers: sorted(figures.answers, (a) => a.algorithm),
      impressions: sorted(figures.impressions, (c) => c.code),
      clicks: sorted(figures.clicks, (c) => c.code),
    }).toEqual({
      answers: [
        { algorithm: 'als', answers: 4 },
        { algorithm: 'pop', answers: 2 },
      ],
      impressions: [
        { code: 'als1', count: 5 },
        { code: 'pop1', count: 1 },
      ],
      clicks: [
        { code: 'als1', count: 3 },
        { code: 'pop1', count: 1 },
      ],
    });
  });

  it("gives an experiment's figures by variant: impressions, actions, and what the users served spent", async () => {
    const figures = seen(
      'experimentFigures',
      await subject.analytics.experimentFigures('t', WINDOW, 'exp', ['home', 'side']),
    );
    const scenario = (row: { scenario: string }) => row.scenario;
    expect({
      impressions: sorted(figures.impressions, scenario),
      actions: sorted(figures.actions, scenario),
      spending: sorted(figures.spending, scenario),
    }).toEqual({
      impressions: [
        { scenario: 'home', impressions: 4 },
        { scenario: 'side', impressions: 2 },
      ],
      actions: [
        { scenario: 'home', clicks: 3, purchases: 1 },
        { scenario: 'side', clicks: 2, purchases: 1 },
      ],
      spending: [
        // Served u1 (0) and u2 (19.5); u5 (5.5) and u6 (7) bought through it.
        {
          scenario: 'home',
          users: 2,
          revenue: 32,
          count: 4,
          mean: 8,
          variance: expect.closeTo(203.5 / 3, 12),
        },
        // Served u3 (10) and u4 (0).
        { scenario: 'side', users: 2, revenue: 10, count: 2, mean: 5, variance: 50 },
      ],
    });
  });

  it('gives the rows of the record, and forgets users, items and days', async () => {
    const rows = async () => {
      const { items, users } = await subject.analytics.answerRecordRows(D);
      return { items: sorted(items, (r) => r.join('|')), users: sorted(users, (r) => r.join('|')) };
    };
    expect(seen('answerRecordRows', await rows())).toEqual({
      items: [
        ['other', D, 'i7'],
        ['t', D, 'i1'],
        ['t', D, 'i2'],
        ['t', D + 1, 'i1'],
        ['t', D + 1, 'i3'],
        ['t', D + 3, 'i9'],
      ],
      users: [
        ['t', D, 'another', 'home', 'u8'],
        ['t', D, 'exp', 'home', 'u1'],
        ['t', D, 'exp', 'home', 'u2'],
        ['t', D, 'exp', 'side', 'u4'],
        ['t', D + 1, 'exp', 'home', 'u1'],
        ['t', D + 1, 'exp', 'side', 'u3'],
        ['t', D + 3, 'exp', 'home', 'u9'],
      ],
    });
    await subject.analytics.answerRecordForgetUsers('t', ['u1', 'u8']);
    await subject.analytics.answerRecordForgetUsers('t', []);
    await subject.analytics.answerRecordForgetItems('t', ['i1']);
    await subject.analytics.answerRecordForgetItems('other', []);
    expect(seen('itemsAnswered forgotten', await subject.analytics.itemsAnswered('t', WINDOW))).toBe(2);
    await subject.analytics.answerRecordWrite({ counts: [], items: [], users: [], removeBefore: D + 1 });
    expect(seen('answerRecordRows trimmed', await rows())).toEqual({
      items: [
        ['t', D + 1, 'i3'],
        ['t', D + 3, 'i9'],
      ],
      users: [
        ['t', D + 1, 'exp', 'side', 'u3'],
        ['t', D + 3, 'exp', 'home', 'u9'],
      ],
    });
    const figures = await subject.analytics.algorithmFigures('t', WINDOW);
    expect(seen('algorithmFigures trimmed', figures.answers)).toEqual([{ algorithm: 'pop', answers: 2 }]);
  });

  it("applies a staged feed: each id's last record upserted, the feed's other items unavailable", async () => {
    await subject.write((rows) => {
      const put = (tenantId: string, stored: StoredItem) =>
        rows.items.set(rowKey(tenantId, stored.externalId), [tenantId, stored]);
      put('f', item('f1', { category: 'old', attributes: { a: 1, b: { x: 1 }, c: 3 } }));
      put('f', item('f2', {}));
      put('f', item('f3', { attributes: { k: 'v' } }));
      put('f', item('f4', { available: false }));
      put('f', item('m1', { feedManaged: false }));
      put('f', item('m2', { feedManaged: false, category: 'keep', attributes: { p: 1, q: 2 } }));
      put('f', item('s1', { category: 'c', attributes: { k: 1 } }));
      put('f', item('u1', { available: false, attributes: { k: 1 } }));
      put('g', item('f2', {}));
    });
    const staging = await subject.feeds.stage();
    await staging.append([
      mapped('f1', { z: 1 }),
      mapped('n1', { name: 'N', price: 9.5, tags: ['a', 'b'] }, 'cat'),
      { mapped: false, externalId: 'f3' },
    ]);
    await staging.append([
      mapped('f1', { b: 5, d: null, e: [1, null], a: null }),
      mapped('m2', { p: 3 }, null),
      mapped('s1', { k: 1 }),
      mapped('u1', { k: 1 }),
    ]);
    await staging.append([]);
    const steps: string[] = [];
    const changed: CatalogItem[] = [];
    const applied = await staging.apply(
      'f',
      (chunk) => {
        steps.push('changed');
        changed.push(...chunk);
      },
      () => steps.push('dropped'),
    );
    await staging.drop();
    expect(seen('feed applied', applied)).toEqual({ upserted: 5, markedUnavailable: 1 });
    expect(steps).toEqual(['dropped', 'changed']);
    const items = await subject.items('f');
    const now = items.find((found) => found.externalId === 'n1')!.updatedAt;
    expect(now).toBeGreaterThan(1);
    const stored = (externalId: string, fields: Partial<CatalogItem>): CatalogItem => ({
      externalId,
      category: null,
      attributes: '{}',
      expiresAt: null,
      available: true,
      feedManaged: true,
      createdAt: 1,
      updatedAt: 1,
      ...fields,
    });
    expect(seen('feed items', items)).toEqual([
      stored('f1', { category: 'old', attributes: '{"c":3,"b":5,"e":[1,null]}', updatedAt: now }),
      stored('f2', { available: false, updatedAt: now }),
      stored('f3', { attributes: '{"k":"v"}' }),
      stored('f4', { available: false }),
      stored('m1', { feedManaged: false }),
      stored('m2', { attributes: '{"q":2,"p":3}', updatedAt: now }),
      stored('n1', {
        category: 'cat',
        attributes: '{"name":"N","price":9.5,"tags":["a","b"]}',
        createdAt: now,
        updatedAt: now,
      }),
      stored('s1', { category: 'c', attributes: '{"k":1}' }),
      stored('u1', { attributes: '{"k":1}', updatedAt: now }),
    ]);
    expect(sorted(changed, (c) => c.externalId)).toEqual(
      items.filter((found) => ['f1', 'f2', 'm2', 'n1', 'u1'].includes(found.externalId)),
    );
    expect(await subject.items('g')).toEqual([stored('f2', {})]);
  });

  it('changes nothing when a staging is dropped unapplied, or lost before its apply', async () => {
    const before = await subject.items('f');
    const abandoned = await subject.feeds.stage();
    await abandoned.append([mapped('m1', { x: 1 }), mapped('new', {})]);
    await abandoned.drop();
    await abandoned.drop();
    expect(await subject.items('f')).toEqual(before);

    const lost = await subject.feeds.stage();
    await lost.append([mapped('m1', { x: 1 }), mapped('new', {})]);
    await subject.loseStaging();
    await expect(
      lost.apply(
        'f',
        () => undefined,
        () => undefined,
      ),
    ).rejects.toThrow(/nothing changed, sync again/);
    await lost.drop();
    expect(await subject.items('f')).toEqual(before);
  });

  it('reports a sync that failed after its apply committed, with what it applied', async () => {
    await subject.write((rows) => rows.items.set(rowKey('h', 'h1'), ['h', item('h1', {})]));
    const staging = await subject.feeds.stage();
    await staging.append([mapped('h2', { v: 1 })]);
    const failure = await staging
      .apply(
        'h',
        () => {
          throw new Error('no memory');
        },
        () => undefined,
      )
      .catch((error: unknown) => error);
    await staging.drop();
    expect(failure).toBeInstanceOf(AppliedThenFailedError);
    expect((failure as AppliedThenFailedError).applied).toEqual({ upserted: 1, markedUnavailable: 1 });
    expect(
      seen(
        'applied then failed',
        (await subject.items('h')).map((found) => [found.externalId, found.available]),
      ),
    ).toEqual([
      ['h1', false],
      ['h2', true],
    ]);
  });
});

describe('both stores', () => {
  it('gave the same answer to every read, in the same order where the order is specified', () => {
    const [duckDb, postgres] = [results.get('DuckDB')!, results.get('PostgreSQL')!];
    expect([...postgres.keys()]).toEqual([...duckDb.keys()]);
    // Times the stores' clocks gave differ: the rest must not.
    const timeless = (value: unknown) =>
      JSON.parse(
        JSON.stringify(value, (key, v: unknown) =>
          key === 'createdAt' || key === 'updatedAt' ? typeof v : v,
        ),
      );
    // Reads whose rows come in no specified order on DuckDB (no ORDER BY there).
    const unordered = new Set([
      'summary',
      'interactionTotals',
      'interactionsByDay',
      'scenarioDays home',
      'scenarioDays side',
      'algorithmFigures',
      'experimentFigures',
      'answerRecordRows',
      'answerRecordRows trimmed',
    ]);
    for (const [read, value] of duckDb) {
      const other = postgres.get(read);
      if (unordered.has(read)) expect(normalized(other), read).toEqual(normalized(value));
      else expect(timeless(other), read).toEqual(timeless(value));
    }
  });
});

describe("the PostgreSQL store's feed staging", () => {
  let pool: pg.Pool;
  let write: (fill: (rows: RowBuffer) => void) => Promise<void>;
  let feeds: FeedStore;

  beforeAll(async () => {
    pool = await migratedPool();
    write = flushTo(pool);
    feeds = pgFeedStore(pool, exclusiveTasks());
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
  });

  const count = async (text: string) => Number((await pool.query<{ n: string }>(text)).rows[0].n);

  it('merges a write another daemon commits during the apply, and gives the connection back', async () => {
    await write((rows) => rows.items.set(rowKey('p', 'p1'), ['p', item('p1', { attributes: { a: 1 } })]));
    const staging = await feeds.stage();
    await staging.append([mapped('p1', { b: 2 })]);
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE items SET attributes = '{"a":9,"c":3}' WHERE tenant_id = 'p'`);
      const applying = staging.apply(
        'p',
        () => undefined,
        () => undefined,
      );
      const waiting = "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'";
      while ((await count(waiting)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await other.query('COMMIT');
      expect(await applying).toEqual({ upserted: 1, markedUnavailable: 0 });
    } finally {
      other.release();
    }
    await staging.drop();
    expect((await pgItems(pool, 'p')).map((found) => found.attributes)).toEqual(['{"a":9,"c":3,"b":2}']);
    expect(await count("SELECT count(*) AS n FROM pg_class WHERE relname LIKE 'feed_stage_%'")).toBe(0);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('rolls the whole apply back when a statement of it fails', async () => {
    await write((rows) => {
      rows.items.set(rowKey('q', 'q1'), ['q', item('q1', {})]);
      rows.items.set(rowKey('q', 'boom'), ['q', item('boom', {})]);
    });
    // Marking 'boom' unavailable, the apply's last statement, fails.
    await pool.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'boom refused'; END $$`);
    await pool.query(`CREATE TRIGGER refuse BEFORE UPDATE ON items FOR EACH ROW
      WHEN (NEW.external_id = 'boom' AND NOT NEW.available) EXECUTE FUNCTION refuse()`);
    const before = await pgItems(pool, 'q');
    const staging = await feeds.stage();
    try {
      await staging.append([mapped('q1', { v: 1 }), mapped('q2', {})]);
      await expect(
        staging.apply(
          'q',
          () => undefined,
          () => undefined,
        ),
      ).rejects.toThrow(/boom refused/);
    } finally {
      await staging.drop();
      await pool.query('DROP TRIGGER refuse ON items');
    }
    expect(await pgItems(pool, 'q')).toEqual(before);
    expect(pool.idleCount).toBe(pool.totalCount);
  });
});

/** A value with every array of it sorted: where DuckDB gives rows in no specified order. */
function normalized(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalized).sort(byKey((v) => JSON.stringify(v)));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, normalized(v)]));
  return value;
}
