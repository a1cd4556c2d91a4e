import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogReads } from '../../../src/store/api/catalog.js';
import { saveConfigDocument } from '../../../src/store/api/config.js';
import { recordMerge } from '../../../src/store/api/identity.js';
import type { IdentityReads, UserData } from '../../../src/store/api/identity-reads.js';
import type { LoadReads, TenantChunk } from '../../../src/store/api/load.js';
import type { StoreOp } from '../../../src/store/api/ops.js';
import type { TenantReads } from '../../../src/store/api/tenants.js';
import { DuckDbStore } from '../../../src/store/database.js';
import { duckDbLoadReads } from '../../../src/store/duckdb/load.js';
import { pgCatalogReads } from '../../../src/store/postgres/catalog-reads.js';
import { writeFlush } from '../../../src/store/postgres/flush.js';
import { pgIdentityReads } from '../../../src/store/postgres/identity-reads.js';
import { pgLoadReads } from '../../../src/store/postgres/load-reads.js';
import { migratePostgres } from '../../../src/store/postgres/migrations.js';
import { pgTenantReads } from '../../../src/store/postgres/tenant-reads.js';
import type { CatalogItem } from '../../../src/store/row-mapping.js';
import {
  RowBuffer,
  rowKey,
  type StoredImpression,
  type StoredInteraction,
  type StoredItem,
  type StoredUser,
} from '../../../src/store/rows.js';
import { flushTo, startPostgres, type TestPostgres } from '../../support/postgres.js';

// One suite of the reads of tenants, loading, the catalog and identities, run on the DuckDB store and on
// PostgreSQL: the same flushes written to each (DuckDB through its write queue, PostgreSQL with
// writeFlush), then every read of these areas gives the expected answer on both, and the same answer.

const DAY = 86_400_000;

/** Attributes whose text must come back as written: key order, escapes, non-ASCII, number forms. */
const ATTRIBUTES = {
  zeta: 1,
  alpha: { nested: [1, 2.5, 1e21, 1.5e-7, 0.1 + 0.2, -3, true, null, 'x'] },
  text: 'Zoë "quoted" \\ / \n\t\u2028 😀 </script> \u0000',
  empty: {},
  list: [],
};
const USER_ATTRIBUTES = { zeta: 1, alpha: [true, null], name: 'Zoë "Z"' };

function item(externalId: string, createdAt: number, fields: Partial<StoredItem> = {}): StoredItem {
  return {
    externalId,
    category: null,
    attributes: {},
    expiresAt: null,
    available: true,
    feedManaged: false,
    createdAt,
    updatedAt: createdAt + 1,
    ...fields,
  };
}

function user(externalId: string, attributes: Record<string, unknown> = {}): StoredUser {
  return { externalId, attributes, createdAt: 7, updatedAt: 8 };
}

/** An interaction as ingestion stores it; received a millisecond after its time. */
function event(
  fields: Partial<StoredInteraction> & Pick<StoredInteraction, 'itemId' | 'ts'>,
): StoredInteraction {
  return {
    eventId: null,
    userId: null,
    sessionId: null,
    type: 'view',
    weight: 1,
    scenarioSlug: null,
    country: null,
    receivedAt: fields.ts + 1,
    ...fields,
  };
}

function impression(fields: Partial<StoredImpression> & Pick<StoredImpression, 'itemIds'>): StoredImpression {
  return {
    eventId: null,
    userId: 'u1',
    scenarioSlug: 'home',
    country: null,
    recommId: 'r1',
    ts: 110,
    receivedAt: 111,
    ...fields,
  };
}

// Session s1's events in tenant t: two alike views (apart from the event id), a cart and a purchase.
const S1 = [
  event({ eventId: 'es1-1', sessionId: 's1', itemId: 'a', ts: 100, country: 'DE', scenarioSlug: 'home' }),
  event({ sessionId: 's1', itemId: 'a', ts: 100, country: 'DE', scenarioSlug: 'home' }),
  event({ eventId: 'es1-2', sessionId: 's1', itemId: 'b', type: 'cart', ts: 200, amount: 1, price: 10 }),
  event({
    eventId: 'es1-3',
    sessionId: 's1',
    itemId: 'b',
    type: 'purchase',
    ts: 300,
    recommId: 'r1',
    amount: 2,
    price: 19.5,
    profit: 4.25,
  }),
];
const S2 = [event({ eventId: 'es2-1', sessionId: 's2', itemId: 'é', ts: 150 })];
/** A view of s1 after the merges, alike to the first two: listed as the session's, not as a copy. */
const LATE_S1 = event({
  eventId: 'es1-4',
  sessionId: 's1',
  itemId: 'a',
  ts: 100,
  country: 'DE',
  scenarioSlug: 'home',
});

/** A merge's copies of a session's events, as src/identity/merge.ts makes them from sessionEvents. */
function copies(events: StoredInteraction[], userId: string, receivedAt: number): StoredInteraction[] {
  return events.map((e) => ({
    eventId: null,
    userId,
    sessionId: e.sessionId,
    itemId: e.itemId,
    type: e.type,
    weight: e.weight,
    scenarioSlug: e.scenarioSlug,
    country: e.country,
    ts: e.ts,
    receivedAt,
    merged: true,
    amount: e.amount ?? null,
    price: e.price ?? null,
    profit: e.profit ?? null,
  }));
}

/** Events of the histories' windows: since 10 days, purchases since 5 days (all of tenant t but two). */
const WINDOWED: [string, StoredInteraction][] = [
  ['t', event({ userId: 'u3', itemId: 'a', ts: 12 * DAY + 5 })],
  ['t', event({ userId: 'u3', itemId: 'b', type: 'purchase', ts: 7 * DAY, eventId: 'ew-1' })],
  ['t', event({ userId: 'u3', itemId: 'b', ts: 7 * DAY + 1 })],
  ['Z', event({ userId: 'zu', itemId: 'x', ts: 12 * DAY, country: 'US' })],
  ['t', event({ userId: 'u3', itemId: 'é', ts: 10 * DAY })],
  ['t', event({ userId: 'u3', itemId: 'a', ts: 10 * DAY - 1 })],
  ['t', event({ userId: 'u3', itemId: 'a', type: 'purchase', ts: 5 * DAY })],
  ['t', event({ userId: 'u3', itemId: 'B', type: 'purchase', ts: 5 * DAY - 1 })],
  ['t', event({ sessionId: 's9', itemId: 'a', type: 'cart', weight: 0.5, ts: 11 * DAY + 3, country: 'FR' })],
  ['Z', event({ userId: 'zu', itemId: 'x', ts: 11 * DAY + 2 })],
  ['t', event({ userId: 'u3', sessionId: 's9', itemId: 'a2', ts: 13 * DAY, merged: true })],
];

/** The flushes every store is given, in order. */
const FLUSHES: ((rows: RowBuffer) => void)[] = [
  (rows) => {
    const ops: StoreOp[] = [
      { area: 'tenants', op: 'create', tenantId: 't', createdAt: 1 },
      { area: 'tenants', op: 'create', tenantId: 'a-tenant', createdAt: 2 },
      { area: 'tenants', op: 'create', tenantId: 'Z', createdAt: 3 },
      {
        area: 'tenants',
        op: 'saveCredential',
        tenantId: 't',
        kind: 'api',
        secretHash: 'h1',
        salt: 's1',
        updatedAt: 4,
      },
      {
        area: 'tenants',
        op: 'saveCredential',
        tenantId: 't',
        kind: 'admin',
        secretHash: 'h2',
        salt: 's2',
        updatedAt: 4,
      },
      {
        area: 'tenants',
        op: 'saveCredential',
        tenantId: 'Z',
        kind: 'api',
        secretHash: 'h3',
        salt: 's3',
        updatedAt: 4,
      },
      saveConfigDocument('t', 'scenario', 'home', { name: 'home', rules: [{ z: 1, a: 'é' }] }),
      saveConfigDocument('t', 'scenario', 'away', { name: 'away' }),
      saveConfigDocument('Z', 'scenario', 'home', { name: 'z-home' }),
      saveConfigDocument('t', 'settings', 'settings', { userProvisioningModes: [] }),
    ];
    rows.ops.push(...ops);
    const items: [string, StoredItem][] = [
      [
        't',
        item('b', 30, { category: 'shoes', attributes: ATTRIBUTES, expiresAt: '2030-01-01T00:00:00.000Z' }),
      ],
      ['t', item('a', 10)],
      ['t', item('B', 20, { attributes: { z: 1, a: 2 } })],
      ['t', item('a10', 10)],
      ['t', item('a2', 5, { available: false, feedManaged: true })],
      ['t', item('é', 40)],
      ['Z', item('x', 1)],
    ];
    for (const [tenantId, stored] of items)
      rows.items.set(rowKey(tenantId, stored.externalId), [tenantId, stored]);
    const users: [string, StoredUser][] = [
      ['t', user('u1', USER_ATTRIBUTES)],
      ['t', user('u2')],
      ['t', user('u3', { tier: 'gold' })],
      ['Z', user('zu')],
    ];
    for (const [tenantId, stored] of users)
      rows.users.set(rowKey(tenantId, stored.externalId), [tenantId, stored]);
  },
  (rows) => {
    for (const e of [...S1, ...S2]) rows.interactions.push(['t', e]);
    rows.interactions.push(
      ['t', event({ eventId: 'eu1-1', userId: 'u1', sessionId: 's1', itemId: 'a', ts: 250 })],
      ['t', event({ eventId: 'eu2-1', userId: 'u2', itemId: 'b', ts: 260 })],
      ['t', event({ userId: 'u1', itemId: 'B', type: 'rating', weight: 4.5, ts: 270 })],
      // Another tenant's session of the same name.
      ['Z', event({ eventId: 'ez-1', sessionId: 's1', itemId: 'x', ts: 280 })],
    );
    rows.impressions.push(
      ['t', impression({ eventId: 'm1', itemIds: ['a', 'i"{,}', 'é'], country: 'DE' })],
      ['t', impression({ eventId: 'm2', userId: 'u2', itemIds: ['b'], recommId: null })],
      ['t', impression({ itemIds: [], ts: 120, receivedAt: 121, scenarioSlug: null })],
      ['Z', impression({ eventId: 'm1', userId: 'zu', itemIds: ['x'] })],
    );
  },
  // u1 merges s1 and s2; then u2 merges s1.
  (rows) => {
    for (const copy of [...copies(S1, 'u1', 1000), ...copies(S2, 'u1', 1000)])
      rows.interactions.push(['t', copy]);
    rows.ops.push(recordMerge('t', 'u1', 's1', 4, 1000), recordMerge('t', 'u1', 's2', 1, 1000));
  },
  (rows) => {
    for (const copy of copies(S1, 'u2', 2000)) rows.interactions.push(['t', copy]);
    rows.ops.push(recordMerge('t', 'u2', 's1', 4, 2000));
  },
  (rows) => {
    rows.interactions.push(['t', LATE_S1], ...WINDOWED);
  },
];

/** The reads of one store, and how to write a flush to it. */
interface Subject {
  tenants: TenantReads;
  load: LoadReads;
  /** Loading's reads that read two rows at a time (DuckDB: sorts two interactions a query at most). */
  loadInPairs: LoadReads;
  catalog: CatalogReads;
  identity: IdentityReads;
  write(fill: (rows: RowBuffer) => void): Promise<void>;
}

let server: TestPostgres;
let pool: pg.Pool;
let duckDir: string;
let duckStore: DuckDbStore;
const subjects = new Map<string, Subject>();

beforeAll(async () => {
  server = await startPostgres();
  pool = new pg.Pool({ connectionString: server.url, max: 4 });
  const client = await pool.connect();
  try {
    await migratePostgres(client);
  } finally {
    client.release();
  }
  duckDir = mkdtempSync(path.join(tmpdir(), 'nextrec-pg-reads-'));
  duckStore = await DuckDbStore.open(duckDir);
  subjects.set('PostgreSQL', {
    tenants: pgTenantReads(pool),
    load: pgLoadReads(pool),
    loadInPairs: pgLoadReads(pool, 2),
    catalog: pgCatalogReads(pool),
    identity: pgIdentityReads(pool),
    write: flushTo(pool),
  });
  const store = duckStore;
  subjects.set('DuckDB', {
    tenants: store.tenants,
    load: store.load,
    loadInPairs: duckDbLoadReads((query) => store.read(query), 2),
    catalog: store.catalog,
    identity: store.identity,
    write: (fill) =>
      store.writes.submit((rows) => {
        fill(rows);
        return () => undefined;
      }),
  });
  for (const subject of subjects.values()) for (const fill of FLUSHES) await subject.write(fill);
});

afterAll(async () => {
  await duckStore?.close();
  if (duckDir) rmSync(duckDir, { recursive: true, force: true });
  await pool?.end();
  await server?.stop();
});

/** Every row of a stream with its tenant, in the order streamed. */
async function rowsOf<T>(chunks: AsyncIterable<TenantChunk<T>>): Promise<[string, T][]> {
  const rows: [string, T][] = [];
  for await (const chunk of chunks) {
    expect(chunk.tenantIds.length).toBe(chunk.rows.length);
    chunk.rows.forEach((row, i) => rows.push([chunk.tenantIds[i], row]));
  }
  return rows;
}

/** Rows of a read that promises no order, in one order. */
function sorted<T>(rows: T[]): T[] {
  return [...rows].sort((a, b) => {
    const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

function catalogItem(stored: StoredItem): CatalogItem {
  return { ...stored, attributes: JSON.stringify(stored.attributes) };
}

/** An interaction as a history keeps it (LoadReads.windowedInteractions). */
function historyEvent(e: StoredInteraction): StoredInteraction {
  return {
    eventId: null,
    userId: e.userId,
    sessionId: e.sessionId,
    itemId: e.itemId,
    type: e.type,
    weight: e.weight,
    scenarioSlug: null,
    country: e.country,
    ts: e.ts,
    receivedAt: e.ts,
    merged: e.merged === true,
  };
}

/** An interaction as userData lists it: no `merged` nor answer id, revenue numbers or null. */
function listed(e: StoredInteraction): StoredInteraction {
  const rest: Partial<StoredInteraction> = { ...e };
  delete rest.merged;
  delete rest.recommId;
  return {
    ...(rest as StoredInteraction),
    amount: e.amount ?? null,
    price: e.price ?? null,
    profit: e.profit ?? null,
  };
}

/** A session's event as a merge copies it (IdentityReads.sessionEvents). */
function asCopied(e: StoredInteraction): StoredInteraction {
  return { ...listed(e), eventId: null, userId: null, receivedAt: 0 };
}

const U1_DATA: UserData = {
  user: user('u1', USER_ATTRIBUTES),
  // Each event once: the copies of s1's and s2's events stand for them, u2's copies are not listed, and
  // the late view of s1 (a third alike one, with two copies only) is the session's.
  interactions: [
    event({ eventId: 'eu1-1', userId: 'u1', sessionId: 's1', itemId: 'a', ts: 250 }),
    event({ userId: 'u1', itemId: 'B', type: 'rating', weight: 4.5, ts: 270 }),
    ...copies(S1, 'u1', 1000),
    ...copies(S2, 'u1', 1000),
    LATE_S1,
  ].map(listed),
  impressions: [
    impression({ eventId: 'm1', itemIds: ['a', 'i"{,}', 'é'], country: 'DE' }),
    impression({ itemIds: [], ts: 120, receivedAt: 121, scenarioSlug: null }),
  ],
  merges: [
    { userId: 'u1', sessionId: 's1', eventsCopied: 4, mergedAt: 1000 },
    { userId: 'u1', sessionId: 's2', eventsCopied: 1, mergedAt: 1000 },
    { userId: 'u2', sessionId: 's1', eventsCopied: 4, mergedAt: 2000 },
  ],
};

/** Every read of the four areas, with what it answers on the data above. */
const READS: { name: string; read: (subject: Subject) => Promise<unknown>; expected: unknown }[] = [
  { name: 'tenants.ids', read: (s) => s.tenants.ids(), expected: ['Z', 'a-tenant', 't'] },
  {
    name: 'tenants.credentials',
    read: async (s) => sorted(await s.tenants.credentials()),
    expected: [
      { tenantId: 'Z', kind: 'api', secretHash: 'h3', salt: 's3' },
      { tenantId: 't', kind: 'admin', secretHash: 'h2', salt: 's2' },
      { tenantId: 't', kind: 'api', secretHash: 'h1', salt: 's1' },
    ],
  },
  {
    name: 'load.merges',
    read: async (s) => sorted(await s.load.merges()),
    expected: [
      { tenantId: 't', userId: 'u1', sessionId: 's1' },
      { tenantId: 't', userId: 'u1', sessionId: 's2' },
      { tenantId: 't', userId: 'u2', sessionId: 's1' },
    ],
  },
  {
    name: 'load.documents',
    read: async (s) => ({
      scenario: sorted(await s.load.documents('scenario')),
      settings: await s.load.documents('settings'),
      none: await s.load.documents('unknown'),
    }),
    expected: {
      scenario: [
        { tenantId: 'Z', document: { name: 'z-home' } },
        { tenantId: 't', document: { name: 'away' } },
        { tenantId: 't', document: { name: 'home', rules: [{ z: 1, a: 'é' }] } },
      ],
      settings: [{ tenantId: 't', document: { userProvisioningModes: [] } }],
      none: [],
    },
  },
  {
    // A tenant's items in the order they were created, then by id (code points: 'a' before 'a10').
    name: 'load.items',
    read: (s) => rowsOf(s.load.items()),
    expected: [
      ['Z', catalogItem(item('x', 1))],
      ['t', catalogItem(item('a2', 5, { available: false, feedManaged: true }))],
      ['t', catalogItem(item('a', 10))],
      ['t', catalogItem(item('a10', 10))],
      ['t', catalogItem(item('B', 20, { attributes: { z: 1, a: 2 } }))],
      [
        't',
        catalogItem(
          item('b', 30, { category: 'shoes', attributes: ATTRIBUTES, expiresAt: '2030-01-01T00:00:00.000Z' }),
        ),
      ],
      ['t', catalogItem(item('é', 40))],
    ],
  },
  {
    name: 'load.items, two rows at a time',
    read: async (s) =>
      (await rowsOf(s.loadInPairs.items())).map(([tenantId, row]) => [tenantId, row.externalId]),
    expected: [
      ['Z', 'x'],
      ['t', 'a2'],
      ['t', 'a'],
      ['t', 'a10'],
      ['t', 'B'],
      ['t', 'b'],
      ['t', 'é'],
    ],
  },
  {
    name: 'load.users',
    read: async (s) => sorted(await rowsOf(s.load.users())),
    expected: [
      ['Z', user('zu')],
      ['t', user('u1', USER_ATTRIBUTES)],
      ['t', user('u2')],
      ['t', user('u3', { tier: 'gold' })],
    ],
  },
  {
    // t: 8 events, 5 + 4 copies, the late view of s1 and 9 windowed events; Z: 1 and 2 windowed.
    name: 'load.interactionTotals',
    read: async (s) => sorted(await s.load.interactionTotals()),
    expected: [
      { tenantId: 'Z', total: 3 },
      { tenantId: 't', total: 27 },
    ],
  },
  {
    name: 'load.interactionEventIds',
    read: async (s) => sorted(await rowsOf(s.loadInPairs.interactionEventIds())),
    expected: sorted([
      ['Z', 'ez-1'],
      ...['es1-1', 'es1-2', 'es1-3', 'es2-1', 'eu1-1', 'eu2-1', 'es1-4', 'ew-1'].map((id) => ['t', id]),
    ]),
  },
  {
    name: 'load.impressionEventIds',
    read: async (s) => sorted(await rowsOf(s.load.impressionEventIds())),
    expected: [
      ['Z', 'm1'],
      ['t', 'm1'],
      ['t', 'm2'],
    ],
  },
  {
    // In time order across tenants: everything since day 10 (its first millisecond included), purchases
    // since day 5; none of the events of the first day.
    name: 'load.windowedInteractions',
    read: (s) => rowsOf(s.load.windowedInteractions(10 * DAY, 5 * DAY)),
    expected: [6, 1, 4, 9, 8, 3, 0, 10].map((i) => [WINDOWED[i][0], historyEvent(WINDOWED[i][1])]),
  },
  {
    // DuckDB sorts a run of days a query (two events at most here: days 5 and 7, 10, 11, 12, 13); the
    // result is in time order all the same.
    name: 'load.windowedInteractions, two rows at a time',
    read: (s) => rowsOf(s.loadInPairs.windowedInteractions(10 * DAY, 5 * DAY)),
    expected: [6, 1, 4, 9, 8, 3, 0, 10].map((i) => [WINDOWED[i][0], historyEvent(WINDOWED[i][1])]),
  },
  {
    name: 'load.windowedInteractions, a window that holds nothing',
    read: (s) => rowsOf(s.load.windowedInteractions(100 * DAY, 100 * DAY)),
    expected: [],
  },
  {
    name: 'catalog.listItems, in pages',
    read: async (s) => [
      await s.catalog.listItems('t', 1, 4),
      await s.catalog.listItems('t', 2, 4),
      await s.catalog.listItems('t', 3, 4),
      await s.catalog.listItems('a-tenant', 1, 10),
    ],
    expected: [
      {
        rows: [
          item('B', 20, { attributes: { z: 1, a: 2 } }),
          item('a', 10),
          item('a10', 10),
          item('a2', 5, { available: false, feedManaged: true }),
        ],
        total: 6,
      },
      {
        rows: [
          item('b', 30, { category: 'shoes', attributes: ATTRIBUTES, expiresAt: '2030-01-01T00:00:00.000Z' }),
          item('é', 40),
        ],
        total: 6,
      },
      { rows: [], total: 6 },
      { rows: [], total: 0 },
    ],
  },
  {
    name: 'catalog.listUsers, in pages',
    read: async (s) => [
      await s.catalog.listUsers('t', 1, 2),
      await s.catalog.listUsers('t', 2, 2),
      await s.catalog.listUsers('Z', 1, 2),
    ],
    expected: [
      { rows: [user('u1', USER_ATTRIBUTES), user('u2')], total: 3 },
      { rows: [user('u3', { tier: 'gold' })], total: 3 },
      { rows: [user('zu')], total: 1 },
    ],
  },
  {
    // The sessions' own events in commit order (not the user's event naming s1, nor Z's session s1).
    name: 'identity.sessionEvents',
    read: (s) => s.identity.sessionEvents('t', ['s1', 's2']),
    expected: [...S1, ...S2, LATE_S1].map(asCopied),
  },
  {
    name: 'identity.sessionEvents of a session with none',
    read: (s) => s.identity.sessionEvents('a-tenant', ['s1']),
    expected: [],
  },
  {
    name: 'identity.interactionEventIds',
    read: async (s) => sorted(await s.identity.interactionEventIds('t', ['u1', 's1', 's2'])),
    expected: sorted(['es1-1', 'es1-2', 'es1-3', 'es2-1', 'eu1-1', 'es1-4']),
  },
  {
    name: 'identity.userData of a user with sessions and merges',
    read: (s) => s.identity.userData('t', 'u1', ['s1', 's2']),
    expected: U1_DATA,
  },
  {
    name: 'identity.userData of a user without sessions',
    read: (s) => s.identity.userData('t', 'u2', []),
    expected: {
      user: user('u2'),
      interactions: [
        event({ eventId: 'eu2-1', userId: 'u2', itemId: 'b', ts: 260 }),
        ...copies(S1, 'u2', 2000),
      ].map(listed),
      impressions: [impression({ eventId: 'm2', userId: 'u2', itemIds: ['b'], recommId: null })],
      merges: [{ userId: 'u2', sessionId: 's1', eventsCopied: 4, mergedAt: 2000 }],
    },
  },
  {
    name: 'identity.userData of an unknown user',
    read: (s) => s.identity.userData('t', 'nobody', []),
    expected: { user: null, interactions: [], impressions: [], merges: [] },
  },
];

describe.each(['DuckDB', 'PostgreSQL'])(
  'reads of tenants, loading, the catalog and identities on %s',
  (name) => {
    it.each(READS)('$name', async ({ read, expected }) => {
      expect(await read(subjects.get(name)!)).toStrictEqual(expected);
    });

    it("gives an item's attributes back as the text that was written", async () => {
      const items = await rowsOf(subjects.get(name)!.load.items());
      const b = items.find(([, row]) => row.externalId === 'b')![1];
      expect(b.attributes).toBe(JSON.stringify(ATTRIBUTES));
      expect(b.attributes).toContain(
        '{"zeta":1,"alpha":{"nested":[1,2.5,1e+21,1.5e-7,0.30000000000000004,-3,',
      );
    });

    it('streams that can be read again, and stopped early', async () => {
      const load = subjects.get(name)!.loadInPairs;
      const items = load.items();
      expect(await rowsOf(items)).toEqual(await rowsOf(items));
      for await (const chunk of load.users()) {
        expect(chunk.rows.length).toBeGreaterThan(0);
        break;
      }
      expect(await subjects.get(name)!.tenants.ids()).toEqual(['Z', 'a-tenant', 't']);
    });
  },
);

describe('both stores', () => {
  it.each(READS)('answer $name alike', async ({ read }) => {
    expect(await read(subjects.get('PostgreSQL')!)).toStrictEqual(await read(subjects.get('DuckDB')!));
  });
});

describe('PostgreSQL streams', () => {
  /** Sessions of the cluster in a transaction, or waiting in one. */
  async function inTransaction(): Promise<number> {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND state <> 'idle'`,
    );
    return rows[0].n;
  }

  it('fetch a chunk at a time, and give the connection back when the caller stops', async () => {
    const load = pgLoadReads(pool, 2);
    const chunks: number[] = [];
    for await (const chunk of load.windowedInteractions(10 * DAY, 5 * DAY)) chunks.push(chunk.rows.length);
    expect(chunks).toEqual([2, 2, 2, 2]);
    const iterator = load.items()[Symbol.asyncIterator]();
    await iterator.next();
    expect(await inTransaction()).toBe(1);
    await iterator.return?.();
    expect(await inTransaction()).toBe(0);
    expect(pool.idleCount).toBe(pool.totalCount);
  });

  it('give events of the same time in commit order', async () => {
    const rows = new RowBuffer();
    for (const itemId of ['c', 'a', 'b'])
      rows.interactions.push(['tie', event({ userId: 'u', itemId, ts: 50 * DAY })]);
    const client = await pool.connect();
    try {
      await writeFlush(client, rows);
    } finally {
      client.release();
    }
    const events = await rowsOf(pgLoadReads(pool, 2).windowedInteractions(50 * DAY, 50 * DAY));
    expect(events.map(([tenantId, e]) => [tenantId, e.itemId])).toEqual([
      ['tie', 'c'],
      ['tie', 'a'],
      ['tie', 'b'],
    ]);
  });
});
