import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EVENT_TABLES,
  SNAPSHOT_TABLES,
  partitionSegments,
  segmentName,
  snapshots,
  tableDir,
  vectorConfigFile,
  type LakeTable,
} from '../../../src/lake/layout.js';
import { saveConfigDocument } from '../../../src/store/api/config.js';
import { forgetIdentities } from '../../../src/store/api/identity.js';
import { DuckDbStore } from '../../../src/store/database.js';
import {
  LakeExporter,
  eraseFromLake,
  exportNow,
  exportTenantLake,
  type CompactionOptions,
  type TableExport,
  type VectorConfigKinds,
} from '../../../src/store/lake-export.js';
import { PgStore } from '../../../src/store/postgres/pg-store.js';
import {
  rowKey,
  type RowBuffer,
  type StoredImpression,
  type StoredInteraction,
  type StoredItem,
  type StoredUser,
} from '../../../src/store/rows.js';
import { sqlString } from '../../../src/store/sql.js';
import type { Store } from '../../../src/store/store.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';

// One suite of the lake export run on the DuckDB store and on the PostgreSQL store: the same writes to
// each, then every export, compaction and erasure must leave the same files in both lakes, of the same
// Parquet schema, holding the rows as written.

const TENANT = 'shop';
const OTHER = 'other';
const ERASED_USER = 'zz-erased-user';
const GONE = 'gone-item';
/** More interactions than the PostgreSQL store fetches a chunk at a time (5,000). */
const BULK = 6_200;

const VECTOR_KINDS: VectorConfigKinds = new Map([
  ['embedding-template', 'templates'],
  ['vector-defaults', 'defaults'],
  ['scenario', 'scenarios'],
]);
/** Segments kept as they are; merged-away ones removed at once. */
const KEEP: CompactionOptions = { smallBytes: 1 << 30, maxSegments: 16, graceMs: 0 };
/** Every run of small segments merged. */
const MERGE: CompactionOptions = { smallBytes: 1 << 30, maxSegments: 1, graceMs: 0 };

/** The lake's columns and their types, as the batch jobs read them. */
const SCHEMAS: Record<LakeTable, [string, string][]> = {
  interactions: [
    ['seq', 'BIGINT'],
    ['event_id', 'VARCHAR'],
    ['user_id', 'VARCHAR'],
    ['session_id', 'VARCHAR'],
    ['item_id', 'VARCHAR'],
    ['type', 'VARCHAR'],
    ['weight', 'DOUBLE'],
    ['scenario_slug', 'VARCHAR'],
    ['country', 'VARCHAR'],
    ['ts', 'BIGINT'],
    ['received_at', 'BIGINT'],
    ['amount', 'DOUBLE'],
    ['price', 'DOUBLE'],
    ['profit', 'DOUBLE'],
  ],
  impressions: [
    ['seq', 'BIGINT'],
    ['event_id', 'VARCHAR'],
    ['user_id', 'VARCHAR'],
    ['item_ids', 'VARCHAR[]'],
    ['scenario_slug', 'VARCHAR'],
    ['country', 'VARCHAR'],
    ['recomm_id', 'VARCHAR'],
    ['ts', 'BIGINT'],
    ['received_at', 'BIGINT'],
  ],
  items: [
    ['external_id', 'VARCHAR'],
    ['category', 'VARCHAR'],
    ['attributes', 'VARCHAR'],
    ['expires_at', 'VARCHAR'],
    ['available', 'BOOLEAN'],
    ['feed_managed', 'BOOLEAN'],
    ['created_at', 'BIGINT'],
    ['updated_at', 'BIGINT'],
  ],
  users: [
    ['external_id', 'VARCHAR'],
    ['attributes', 'VARCHAR'],
    ['created_at', 'BIGINT'],
    ['updated_at', 'BIGINT'],
  ],
};

/** Attributes whose text must reach the lake as written: key order, escapes, non-ASCII, number forms. */
const ATTRIBUTES = {
  zeta: 1,
  alpha: { nested: [1, 2.5, 1e21, 1.5e-7, -3, true, null, 'x'] },
  text: 'Zoë "quoted" \\ / \n\t 😀',
  empty: {},
};

function item(externalId: string, fields: Partial<StoredItem> = {}): StoredItem {
  return {
    externalId,
    category: 'shoes',
    attributes: { price: 10 },
    expiresAt: null,
    available: true,
    feedManaged: false,
    createdAt: 100,
    updatedAt: 100,
    ...fields,
  };
}

function user(externalId: string, fields: Partial<StoredUser> = {}): StoredUser {
  return { externalId, attributes: {}, createdAt: 5, updatedAt: 6, ...fields };
}

let nextEvent = 0;

function event(fields: Partial<StoredInteraction> = {}): StoredInteraction {
  const n = nextEvent++;
  return {
    eventId: `e-${n}`,
    userId: `u${n % 7}`,
    sessionId: null,
    itemId: `i${n % 11}`,
    type: 'view',
    weight: 1,
    scenarioSlug: null,
    country: null,
    ts: 1_000 + n,
    receivedAt: 2_000 + n,
    ...fields,
  };
}

function impression(itemIds: string[], fields: Partial<StoredImpression> = {}): StoredImpression {
  const n = nextEvent++;
  return {
    eventId: `m-${n}`,
    userId: 'u1',
    itemIds,
    scenarioSlug: 'home',
    country: null,
    recommId: `r-${n}`,
    ts: 1_000 + n,
    receivedAt: 2_000 + n,
    ...fields,
  };
}

/** What the store was given, to compare the lake with: events in the order they were written. */
const written = {
  interactions: [] as StoredInteraction[],
  impressions: [] as StoredImpression[],
  items: new Map<string, StoredItem>(),
  users: new Map<string, StoredUser>(),
};

const FIRST_INTERACTIONS: StoredInteraction[] = [
  event({ userId: ERASED_USER, itemId: GONE, type: 'purchase', amount: 2, price: 19.5, profit: 4.25 }),
  event({ userId: null, sessionId: 's-1', country: 'DE', scenarioSlug: 'home', itemId: 'é' }),
  event({ eventId: null, type: 'rating', weight: 4.5 }),
  event({ userId: ERASED_USER, sessionId: 's-2', itemId: 'i"{,}', type: 'cart', amount: 1, price: 10 }),
  ...Array.from({ length: BULK }, () => event()),
  event({ userId: 'last', itemId: GONE }),
];
const FIRST_IMPRESSIONS: StoredImpression[] = [
  impression(['a', GONE, 'é', 'i"{,}'], { country: 'FR' }),
  impression([GONE]),
  impression([], { userId: ERASED_USER, scenarioSlug: null, recommId: null }),
  impression(['b', 'a'], { userId: null, eventId: null }),
];
const FIRST_ITEMS: StoredItem[] = [
  item('b', { attributes: ATTRIBUTES, expiresAt: '2030-01-01T00:00:00.000Z' }),
  item('a', { category: null, available: false, feedManaged: true }),
  item('B'),
  item('é', { createdAt: 1, updatedAt: 2 }),
  item(GONE),
];
const FIRST_USERS: StoredUser[] = [
  user('u1', { attributes: { tier: 'gold', nested: { a: [1, 'ü'] } } }),
  user('u2'),
  user(ERASED_USER, { updatedAt: 9 }),
];
const SECOND_INTERACTIONS = [event({ itemId: GONE }), event({ userId: ERASED_USER }), event()];
const SECOND_IMPRESSIONS = [impression([GONE, 'b'])];
const THIRD_INTERACTIONS = [event({ userId: 'late' })];

/** The first flush: two tenants, their catalog and vector configuration, and the shop's events. */
function firstFlush(rows: RowBuffer): void {
  rows.ops.push(
    { area: 'tenants', op: 'create', tenantId: TENANT, createdAt: 1 },
    { area: 'tenants', op: 'create', tenantId: OTHER, createdAt: 2 },
    saveConfigDocument(TENANT, 'scenario', 'home', { slug: 'home', vectors: { quantization: 'int8' } }),
    saveConfigDocument(TENANT, 'embedding-template', 'default', { template: '{{ title }} — é', z: 1, a: 2 }),
    saveConfigDocument(TENANT, 'scenario', 'away', { slug: 'away' }),
    saveConfigDocument(TENANT, 'settings', 'settings', { notVectors: true }),
    saveConfigDocument(OTHER, 'scenario', 'home', { slug: 'other-home' }),
  );
  for (const stored of FIRST_ITEMS) rows.items.set(rowKey(TENANT, stored.externalId), [TENANT, stored]);
  for (const stored of FIRST_USERS) rows.users.set(rowKey(TENANT, stored.externalId), [TENANT, stored]);
  rows.items.set(rowKey(OTHER, 'o'), [OTHER, item('o')]);
  rows.users.set(rowKey(OTHER, 'u1'), [OTHER, user('u1')]);
  for (const e of FIRST_INTERACTIONS) rows.interactions.push([TENANT, e]);
  for (const m of FIRST_IMPRESSIONS) rows.impressions.push([TENANT, m]);
}

/** Records what a flush wrote for the shop, once (the same flush goes to both stores). */
function remember(rows: RowBuffer): void {
  for (const [tenantId, e] of rows.interactions) if (tenantId === TENANT) written.interactions.push(e);
  for (const [tenantId, m] of rows.impressions) if (tenantId === TENANT) written.impressions.push(m);
  for (const [tenantId, stored] of rows.items.values())
    if (tenantId === TENANT) written.items.set(stored.externalId, stored);
  for (const [tenantId, stored] of rows.users.values())
    if (tenantId === TENANT) written.users.set(stored.externalId, stored);
}

interface Subject {
  name: string;
  store: Store;
  /** The data dir whose lake the store exports to. */
  dir: string;
}

let server: TestPostgres;
let reader: DuckDBInstance;
let db: DuckDBConnection;
const subjects: Subject[] = [];
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-lake-stores-'));
  dirs.push(dir);
  return dir;
}

/** Gives both stores the same flush, and remembers what it wrote. */
async function writeBoth(fill: (rows: RowBuffer) => void): Promise<void> {
  let remembered = false;
  for (const { store } of subjects)
    await store.writes.submit((rows) => {
      fill(rows);
      if (!remembered) remember(rows);
      remembered = true;
      return () => undefined;
    });
}

beforeAll(async () => {
  server = await startPostgres();
  reader = await DuckDBInstance.create(':memory:');
  db = await reader.connect();
  const duckDir = tempDir();
  subjects.push({ name: 'DuckDB', store: await DuckDbStore.open(duckDir), dir: duckDir });
  subjects.push({
    name: 'PostgreSQL',
    store: await PgStore.open(server.url, { duckdb: { memoryLimit: '64MB', threads: 1 } }),
    dir: tempDir(),
  });
  await writeBoth(firstFlush);
});

afterAll(async () => {
  for (const { store } of subjects) await store.close();
  db?.closeSync();
  reader?.closeSync();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await server?.stop();
});

async function query(sql: string): Promise<unknown[][]> {
  return (await db.runAndReadAll(sql)).getRowsJS();
}

/** The tenant's lake as file names: every segment (live and covered), and the count of snapshots. */
function listing(dir: string): Record<LakeTable, string[] | number> {
  const listed = {} as Record<LakeTable, string[] | number>;
  for (const table of EVENT_TABLES) {
    const { live, covered } = partitionSegments(tableDir(dir, TENANT, table));
    listed[table] = [...live, ...covered].map((segment) => path.basename(segment.file)).sort();
  }
  for (const table of SNAPSHOT_TABLES) listed[table] = snapshots(tableDir(dir, TENANT, table)).length;
  return listed;
}

/** Every Parquet file of the tenant's lake by table, in the order of `listing`. */
function parquetFiles(dir: string, table: LakeTable): string[] {
  if ((EVENT_TABLES as readonly string[]).includes(table)) {
    const { live, covered } = partitionSegments(tableDir(dir, TENANT, table));
    return [...live, ...covered]
      .sort((a, b) => (path.basename(a.file) < path.basename(b.file) ? -1 : 1))
      .map((segment) => segment.file);
  }
  return snapshots(tableDir(dir, TENANT, table)).map((snapshot) => snapshot.file);
}

/** The rows the table's live files hold, in order (a catalog table: its latest snapshot). */
async function lakeRows(dir: string, table: LakeTable): Promise<unknown[][]> {
  const files = (EVENT_TABLES as readonly string[]).includes(table)
    ? partitionSegments(tableDir(dir, TENANT, table)).live.map((segment) => segment.file)
    : snapshots(tableDir(dir, TENANT, table))
        .slice(-1)
        .map((snapshot) => snapshot.file);
  const rows: unknown[][] = [];
  for (const file of files) rows.push(...(await query(`SELECT * FROM read_parquet(${sqlString(file)})`)));
  return rows;
}

/** A file's columns as DuckDB reads them, and its Parquet schema (types, repetition, logical types). */
async function schemaOf(file: string): Promise<{ describe: unknown[][]; parquet: unknown[][] }> {
  return {
    describe: await query(`DESCRIBE SELECT * FROM read_parquet(${sqlString(file)})`),
    parquet: await query(
      `SELECT name, type, type_length, repetition_type, num_children, converted_type, scale, precision,
              field_id, logical_type
         FROM parquet_schema(${sqlString(file)})`,
    ),
  };
}

function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** The rows the lake should hold for what was written, the erased ones left out. */
function expectedRows(
  table: LakeTable,
  erasedUsers: readonly string[] = [],
  erasedItems: readonly string[] = [],
): unknown[][] {
  const bigint = (n: number) => BigInt(n);
  switch (table) {
    case 'interactions':
      return written.interactions.flatMap((e, i) =>
        erasedUsers.includes(e.userId ?? '') ||
        erasedUsers.includes(e.sessionId ?? '') ||
        erasedItems.includes(e.itemId)
          ? []
          : [
              [
                bigint(i + 1),
                e.eventId,
                e.userId,
                e.sessionId,
                e.itemId,
                e.type,
                e.weight,
                e.scenarioSlug,
                e.country,
                bigint(e.ts),
                bigint(e.receivedAt),
                e.amount ?? null,
                e.price ?? null,
                e.profit ?? null,
              ],
            ],
      );
    case 'impressions':
      return written.impressions.flatMap((m, i) => {
        const itemIds = m.itemIds.filter((id) => !erasedItems.includes(id));
        // An impression goes when it showed only erased items; one that showed none stays.
        if (erasedUsers.includes(m.userId ?? '') || (m.itemIds.length > 0 && itemIds.length === 0)) return [];
        return [
          [
            bigint(i + 1),
            m.eventId,
            m.userId,
            itemIds,
            m.scenarioSlug,
            m.country,
            m.recommId,
            bigint(m.ts),
            bigint(m.receivedAt),
          ],
        ];
      });
    case 'items':
      return [...written.items.values()]
        .filter((stored) => !erasedItems.includes(stored.externalId))
        .sort((a, b) => byCodePoint(a.externalId, b.externalId))
        .map((stored) => [
          stored.externalId,
          stored.category,
          JSON.stringify(stored.attributes),
          stored.expiresAt,
          stored.available,
          stored.feedManaged,
          bigint(stored.createdAt),
          bigint(stored.updatedAt),
        ]);
    case 'users':
      return [...written.users.values()]
        .filter((stored) => !erasedUsers.includes(stored.externalId))
        .sort((a, b) => byCodePoint(a.externalId, b.externalId))
        .map((stored) => [
          stored.externalId,
          JSON.stringify(stored.attributes),
          bigint(stored.createdAt),
          bigint(stored.updatedAt),
        ]);
  }
}

/**
 * Both lakes list the same files, each of the lake's schema (the same Parquet schema in both) and
 * holding the expected rows.
 */
async function expectSameLakes(
  expectedListing: Record<LakeTable, string[] | number>,
  erasedUsers: readonly string[] = [],
  erasedItems: readonly string[] = [],
): Promise<void> {
  const [duck, pg] = subjects;
  for (const subject of subjects) expect(listing(subject.dir), subject.name).toEqual(expectedListing);
  for (const table of [...EVENT_TABLES, ...SNAPSHOT_TABLES]) {
    const [duckFiles, pgFiles] = [parquetFiles(duck.dir, table), parquetFiles(pg.dir, table)];
    expect(pgFiles.length).toBe(duckFiles.length);
    for (let i = 0; i < duckFiles.length; i++) {
      const [duckSchema, pgSchema] = [await schemaOf(duckFiles[i]), await schemaOf(pgFiles[i])];
      expect(
        duckSchema.describe.map(([name, type]) => [name, type]),
        table,
      ).toEqual(SCHEMAS[table]);
      expect(pgSchema, `${table}: ${path.basename(pgFiles[i])}`).toEqual(duckSchema);
    }
    for (const subject of subjects)
      expect(await lakeRows(subject.dir, table), `${subject.name}: ${table}`).toEqual(
        expectedRows(table, erasedUsers, erasedItems),
      );
  }
}

function exportBoth(compaction: CompactionOptions): Promise<TableExport[][]> {
  return Promise.all(
    subjects.map(({ store, dir }) => exportTenantLake(store, dir, TENANT, compaction, VECTOR_KINDS)),
  );
}

function counts(exported: TableExport[]): Record<string, number> {
  return Object.fromEntries(exported.map(({ table, rows }) => [table, rows]));
}

const FIRST = FIRST_INTERACTIONS.length;
const SECOND = FIRST + SECOND_INTERACTIONS.length;
const THIRD = SECOND + THIRD_INTERACTIONS.length;

describe('the lake export, from the DuckDB store and from the PostgreSQL store', () => {
  it('writes the same files, of the same schema, holding the rows as written', async () => {
    for (const exported of await exportBoth(KEEP))
      expect(counts(exported)).toEqual({
        interactions: FIRST,
        impressions: FIRST_IMPRESSIONS.length,
        items: FIRST_ITEMS.length,
        users: FIRST_USERS.length,
      });
    await expectSameLakes({
      interactions: [segmentName(1, FIRST)],
      impressions: [segmentName(1, FIRST_IMPRESSIONS.length)],
      items: 1,
      users: 1,
    });
  });

  it('writes the vector configuration of the kinds asked for, the same from both', () => {
    const [duck, pg] = subjects.map(({ dir }) => readFileSync(vectorConfigFile(dir, TENANT), 'utf8'));
    expect(pg).toBe(duck);
    // By kind, then by key; the other tenant's and other kinds' documents left out.
    expect(JSON.parse(pg)).toEqual({
      templates: [{ template: '{{ title }} — é', z: 1, a: 2 }],
      defaults: [],
      scenarios: [{ slug: 'away' }, { slug: 'home', vectors: { quantization: 'int8' } }],
    });
  });

  it('exports only the new range of events next, and a catalog table only when it changed', async () => {
    await writeBoth((rows) => {
      for (const e of SECOND_INTERACTIONS) rows.interactions.push([TENANT, e]);
      for (const m of SECOND_IMPRESSIONS) rows.impressions.push([TENANT, m]);
      rows.items.set(rowKey(TENANT, 'B'), [TENANT, item('B', { category: 'boots', updatedAt: 500 })]);
      // Another tenant's changes are not the shop's.
      rows.users.set(rowKey(OTHER, 'u9'), [OTHER, user('u9')]);
    });
    for (const exported of await exportBoth(KEEP))
      expect(counts(exported)).toEqual({
        interactions: SECOND_INTERACTIONS.length,
        impressions: SECOND_IMPRESSIONS.length,
        items: FIRST_ITEMS.length,
        users: 0,
      });
    const impressions = FIRST_IMPRESSIONS.length + SECOND_IMPRESSIONS.length;
    const expected = {
      interactions: [segmentName(1, FIRST), segmentName(FIRST + 1, SECOND)],
      impressions: [
        segmentName(1, FIRST_IMPRESSIONS.length),
        segmentName(FIRST_IMPRESSIONS.length + 1, impressions),
      ],
      items: 2,
      users: 1,
    };
    await expectSameLakes(expected);
    // Nothing new: nothing written.
    for (const exported of await exportBoth(KEEP))
      expect(counts(exported)).toEqual({ interactions: 0, impressions: 0, items: 0, users: 0 });
    await expectSameLakes(expected);
  });

  it('merges small segments into one, and removes the merged ones at the next export', async () => {
    await writeBoth((rows) => {
      for (const e of THIRD_INTERACTIONS) rows.interactions.push([TENANT, e]);
    });
    await exportBoth(MERGE);
    const impressions = FIRST_IMPRESSIONS.length + SECOND_IMPRESSIONS.length;
    await expectSameLakes({
      interactions: [
        segmentName(1, FIRST),
        segmentName(1, THIRD),
        segmentName(FIRST + 1, SECOND),
        segmentName(SECOND + 1, THIRD),
      ],
      impressions: [
        segmentName(1, FIRST_IMPRESSIONS.length),
        segmentName(1, impressions),
        segmentName(FIRST_IMPRESSIONS.length + 1, impressions),
      ],
      items: 2,
      users: 1,
    });
    await exportBoth(MERGE);
    await expectSameLakes({
      interactions: [segmentName(1, THIRD)],
      impressions: [segmentName(1, impressions)],
      items: 2,
      users: 1,
    });
  });

  it("erases a deleted user's rows from every file, the same in both", async () => {
    await writeBoth((rows) => rows.ops.push(forgetIdentities(TENANT, [ERASED_USER])));
    const rewritten = await Promise.all(
      subjects.map(({ store, dir }) => eraseFromLake(store, dir, TENANT, [ERASED_USER])),
    );
    // The merged segment of each event table, and the users snapshot.
    expect(rewritten).toEqual([3, 3]);
    const impressions = FIRST_IMPRESSIONS.length + SECOND_IMPRESSIONS.length;
    await expectSameLakes(
      {
        interactions: [segmentName(1, THIRD)],
        impressions: [segmentName(1, impressions)],
        items: 2,
        users: 1,
      },
      [ERASED_USER],
    );
  });

  it('erases a deleted item, keeping the other items an impression showed', async () => {
    await Promise.all(
      subjects.map(({ store }) => store.catalog.removeItems(TENANT, [GONE], () => undefined)),
    );
    const rewritten = await Promise.all(
      subjects.map(({ store, dir }) => new LakeExporter(store, dir).eraseItems(TENANT, [GONE])),
    );
    // The interactions, the impressions and both items snapshots.
    expect(rewritten).toEqual([4, 4]);
    const impressions = FIRST_IMPRESSIONS.length + SECOND_IMPRESSIONS.length;
    const expected = {
      interactions: [segmentName(1, THIRD)],
      impressions: [segmentName(1, impressions)],
      items: 2,
      users: 1,
    };
    await expectSameLakes(expected, [ERASED_USER], [GONE]);
    // The store and the lake agree again: the next export brings nothing back.
    for (const exported of await exportBoth(KEEP))
      expect(counts(exported)).toEqual({ interactions: 0, impressions: 0, items: 0, users: 0 });
    await expectSameLakes(expected, [ERASED_USER], [GONE]);
  });

  it('exports every stored tenant on demand', async () => {
    const exported = await Promise.all(
      subjects.map(({ store, dir }) => exportNow(store, new LakeExporter(store, dir))),
    );
    for (const tenants of exported) expect(tenants.map(({ tenantId }) => tenantId)).toEqual([OTHER, TENANT]);
    const [duck, pg] = subjects;
    const otherUsers = async (dir: string) =>
      (
        await query(
          `SELECT external_id FROM read_parquet(${sqlString(snapshots(tableDir(dir, OTHER, 'users'))[0].file)}) ORDER BY 1`,
        )
      ).flat();
    expect(await otherUsers(pg.dir)).toEqual(['u1', 'u9']);
    expect(await otherUsers(duck.dir)).toEqual(['u1', 'u9']);
  });
  it('reads one snapshot: what commits while an export reads goes to the next export', async () => {
    for (const { name, store, dir } of subjects) {
      const late = event({ userId: `late-${name}` });
      await store.lake.snapshot(dir, TENANT, async (snapshot) => {
        const before = await snapshot.events('interactions', THIRD);
        expect(before).toEqual({ rows: 0, through: 0 });
        const items = await snapshot.catalog('items');
        // Committed in the store's own transaction (with an operation, so not through a log first).
        await store.writes.submit((rows) => {
          rows.interactions.push([TENANT, late]);
          rows.items.set(rowKey(TENANT, 'new'), [TENANT, item('new', { updatedAt: 900 })]);
          rows.ops.push(saveConfigDocument(TENANT, 'scenario', 'late', { slug: 'late' }));
          return () => undefined;
        });
        expect(await snapshot.events('interactions', THIRD), name).toEqual(before);
        expect(await snapshot.catalog('items'), name).toEqual(items);
        expect(await snapshot.documents(['scenario']), name).toHaveLength(2);
      });
      const exported = await exportTenantLake(store, dir, TENANT, KEEP, VECTOR_KINDS);
      expect(counts(exported), name).toEqual({ interactions: 1, impressions: 0, items: 5, users: 0 });
      expect(partitionSegments(tableDir(dir, TENANT, 'interactions')).live.at(-1)?.last).toBe(THIRD + 1);
    }
  });

  it('exports the event tables alone when asked, and the catalog with the next export of every table', async () => {
    const tenant = 'events-only';
    for (const { name, store, dir } of subjects) {
      await store.writes.submit((rows) => {
        rows.interactions.push([tenant, event()]);
        rows.items.set(rowKey(tenant, 'a'), [tenant, item('a')]);
        return () => undefined;
      });
      const events = await exportTenantLake(store, dir, tenant, KEEP, VECTOR_KINDS, 'events');
      expect(counts(events), name).toEqual({ interactions: 1, impressions: 0 });
      expect(snapshots(tableDir(dir, tenant, 'items')), name).toEqual([]);
      const all = await exportTenantLake(store, dir, tenant, KEEP, VECTOR_KINDS);
      expect(counts(all), name).toEqual({ interactions: 0, impressions: 0, items: 1, users: 0 });
    }
  });
});

describe('what each store reports of its memory', () => {
  it('is the DuckDB store file and limits under `duckdb`', async () => {
    const memory = await subjects[0].store.memory();
    expect(Object.keys(memory)).toEqual(['duckdb']);
    expect('duckdb' in memory && memory.duckdb.fileBytes).toBeGreaterThan(0);
  });

  it("is the PostgreSQL pool, the database's size and the lake's DuckDB under `postgres`", async () => {
    const memory = await subjects[1].store.memory();
    if (!('postgres' in memory)) throw new Error(`not a PostgreSQL report: ${JSON.stringify(memory)}`);
    const { postgres } = memory;
    expect(postgres).toMatchObject({ poolSize: 10, inUse: 0, waiting: 0 });
    expect(postgres.connections).toBeGreaterThan(0);
    expect(postgres.connections).toBeLessThanOrEqual(10);
    // The shop's 6,000 events and more, besides the empty database's own catalog.
    expect(postgres.databaseBytes).toBeGreaterThan(1_000_000);
    // The lake's DuckDB, opened by the exports above, with the limits it was given.
    expect(postgres.lake).toMatchObject({ memoryLimit: '64MB', threads: 1 });
    expect(postgres.lake!.memory.total).toBeGreaterThanOrEqual(0);
  });
});
