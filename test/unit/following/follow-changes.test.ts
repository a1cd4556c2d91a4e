import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { followChanges, type StaleAnswers } from '../../../src/following/follow-changes.js';
import { scenarios } from '../../../src/config/resources.js';
import { SCENARIO } from '../../../src/contract/scenarios.js';
import { mergeIdentity } from '../../../src/identity/merge.js';
import { deleteUser } from '../../../src/identity/user-data.js';
import { appendImpressions, appendInteractions } from '../../../src/ingestion/events.js';
import { deleteItems } from '../../../src/ingestion/item-deletes.js';
import { upsertItems } from '../../../src/ingestion/items.js';
import { upsertUsers } from '../../../src/ingestion/users.js';
import { closeRuntime, openRuntime, type Runtime } from '../../../src/runtime.js';
import type { TenantState } from '../../../src/state/tenant-state.js';
import { updateTenantSettings } from '../../../src/tenants/settings-service.js';
import { createTenant, rotateCredential } from '../../../src/tenants/tenant-service.js';
import { startPostgres, type TestPostgres } from '../../support/postgres.js';

// Two daemons' runtimes on one PostgreSQL database (docs/architecture.md, "The store"): what one writes
// through its services shows in the other's serving state once that one caught up with the log.

let postgres: TestPostgres;
let dataDir: string;
let a: Runtime;
let b: Runtime;
/** What each runtime's follower was told of deletions. */
let deleted: { a: string[]; b: string[] };
let failures: unknown[];
let storeUrl: string;
let databases = 0;

/** A new empty database of the test cluster, for one test. */
async function freshDatabase(): Promise<string> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  const name = `follow_${++databases}`;
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(postgres.url);
  url.pathname = `/${name}`;
  return url.toString();
}

beforeAll(async () => {
  postgres = await startPostgres();
});

afterAll(async () => {
  await postgres?.stop();
});

function deletions(into: string[]): StaleAnswers {
  return {
    itemsRemoved: (tenantId) => into.push(`items of ${tenantId}`),
    identitiesForgotten: (tenantId, identities) => into.push(`${identities.join(',')} of ${tenantId}`),
  };
}

/** A runtime on the test's database, following the other's writes unless `into` is undefined. */
async function open(into: string[] | undefined): Promise<Runtime> {
  const runtime = await openRuntime(dataDir, undefined, undefined, { storeUrl });
  if (into) start(runtime, into);
  return runtime;
}

function start(runtime: Runtime, into: string[]): void {
  const feed = followChanges(runtime, deletions(into), (error) => failures.push(error));
  if (!feed) throw new Error('a PostgreSQL store has changes to follow');
}

/** The entries of the log whose text names one of the ids. */
async function logNaming(ids: string[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: storeUrl });
  await client.connect();
  try {
    const rows = await client.query<{ payload: string }>('SELECT payload::text FROM change_log');
    return rows.rows.map((row) => row.payload).filter((text) => ids.some((id) => text.includes(`"${id}"`)));
  } finally {
    await client.end();
  }
}

/** Waits until `runtime` applied every change committed so far. */
async function caughtUp(runtime: Runtime): Promise<void> {
  await runtime.store.changes!.caughtUp();
}

function tenantOf(runtime: Runtime, tenantId = 't'): TenantState {
  const tenant = runtime.state.get(tenantId);
  if (!tenant) throw new Error(`no tenant ${tenantId}`);
  return tenant;
}

const interaction = (eventId: string | undefined, userId: string, itemId: string) => ({
  ...(eventId && { eventId }),
  userId,
  itemId,
  type: 'view' as const,
});

describe('daemons sharing a PostgreSQL store', () => {
  beforeEach(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-follow-'));
    deleted = { a: [], b: [] };
    failures = [];
    storeUrl = await freshDatabase();
    a = await open(deleted.a);
    b = await open(deleted.b);
  });

  afterEach(async () => {
    await closeRuntime(a);
    await closeRuntime(b);
    rmSync(dataDir, { recursive: true, force: true });
    expect(failures).toEqual([]);
  });

  it('follow each other: a tenant and its credentials, items, users, events, settings and scenarios', async () => {
    const credentials = await createTenant(a, 't');
    await caughtUp(b);
    const tenant = tenantOf(b);
    expect(b.credentials.verify(credentials.apiKey)?.tenantId).toBe('t');
    expect(b.credentials.verify(credentials.privateToken)?.kind).toBe('private');

    await upsertItems(a, tenantOf(a), [
      { externalId: 'i1', category: 'shoes', attributes: { price: 10 } },
      { externalId: 'i2', attributes: { price: 20 } },
    ]);
    await upsertUsers(b, tenantOf(b), [{ externalId: 'u1', attributes: { tier: 'gold' } }]);
    await appendInteractions(a, tenantOf(a), [
      interaction('e1', 'u1', 'i1'),
      interaction('e2', 'u1', 'i2'),
      interaction(undefined, 'u2', 'i1'),
    ]);
    await appendImpressions(a, tenantOf(a), [{ eventId: 'm1', userId: 'u1', itemIds: ['i1', 'i2'] }]);
    await updateTenantSettings(a, tenantOf(a), { userProvisioningModes: [] });
    await scenarios.create(a, tenantOf(a), SCENARIO.parse({ slug: 'home', logicType: 'user-to-item' }));
    await caughtUp(b);
    await caughtUp(a);

    expect(tenant.catalog.rawDocument(tenant.catalog.idOf('i1'))).toMatchObject({
      externalId: 'i1',
      category: 'shoes',
      attributes: { price: 10 },
    });
    expect(tenant.catalog.holds('i2')).toBe(true);
    expect(tenantOf(a).users.get('u1')?.attributes).toEqual({ tier: 'gold' });
    for (const runtime of [a, b]) {
      const followed = tenantOf(runtime);
      // Each daemon holds each event once: its own from its write, the other's from following.
      expect(followed.interactionTotal).toBe(3);
      expect([...followed.interactionEventIds].sort()).toEqual(['e1', 'e2']);
      expect(followed.histories.get('u1')?.length).toBe(2);
      expect(followed.histories.get('u2')?.length).toBe(1);
      expect([...followed.impressionEventIds]).toEqual(['m1']);
    }
    expect(tenant.settings.userProvisioningModes).toEqual([]);
    expect(scenarios.get(tenant, 'home').logicType).toBe('user-to-item');

    // A credential rotated on one stops working on the other, and the new one works there.
    const rotated = await rotateCredential(b, 't', 'api');
    await caughtUp(a);
    expect(a.credentials.verify(credentials.apiKey)).toBeUndefined();
    expect(a.credentials.verify(rotated.apiKey!)?.tenantId).toBe('t');

    // A scenario removed on the other goes here too.
    await scenarios.remove(b, tenantOf(b), 'home');
    await caughtUp(a);
    expect(() => scenarios.get(tenantOf(a), 'home')).toThrow(/does not exist/);
  });

  it('store and count an event id once when both daemons take it', async () => {
    await closeRuntime(b);
    await createTenant(a, 't');
    // This one does not follow yet: its state knows nothing of what the other writes meanwhile.
    b = await open(undefined);
    await appendInteractions(a, tenantOf(a), [interaction('e1', 'u1', 'i1'), interaction('e2', 'u1', 'i2')]);
    await appendImpressions(a, tenantOf(a), [{ eventId: 'm1', userId: 'u1', itemIds: ['i1'] }]);
    // Retried against the other daemon: e2 and m1 are stored already, e3 and m2 are new.
    expect(
      await appendInteractions(b, tenantOf(b), [
        interaction('e2', 'u1', 'i2'),
        interaction('e3', 'u1', 'i3'),
      ]),
    ).toMatchObject({ accepted: 2 });
    await appendImpressions(b, tenantOf(b), [
      { eventId: 'm1', userId: 'u1', itemIds: ['i1'] },
      { eventId: 'm2', userId: 'u1', itemIds: ['i2'] },
    ]);
    // Its own write counted only what it stored.
    expect(tenantOf(b).interactionTotal).toBe(1);
    expect(tenantOf(b).histories.get('u1')?.length).toBe(1);
    start(b, deleted.b);
    await caughtUp(b);
    await caughtUp(a);
    for (const runtime of [a, b]) {
      const tenant = tenantOf(runtime);
      expect(tenant.interactionTotal).toBe(3);
      expect([...tenant.interactionEventIds].sort()).toEqual(['e1', 'e2', 'e3']);
      expect(tenant.histories.get('u1')?.length).toBe(3);
      expect([...tenant.impressionEventIds].sort()).toEqual(['m1', 'm2']);
    }
    // A third daemon loads them once too.
    const c = await open(undefined);
    try {
      expect(tenantOf(c).interactionTotal).toBe(3);
      expect(tenantOf(c).histories.get('u1')?.length).toBe(3);
    } finally {
      await closeRuntime(c);
    }
  });

  it('follow item deletions, user deletions and identity merges', async () => {
    await createTenant(a, 't');
    await upsertItems(a, tenantOf(a), [{ externalId: 'i1' }, { externalId: 'i2' }, { externalId: 'i3' }]);
    await appendInteractions(a, tenantOf(a), [
      interaction('e1', 'u1', 'i1'),
      interaction('e2', 'u1', 'i2'),
      { eventId: 's1', sessionId: 'anon', itemId: 'i3', type: 'view' },
    ]);
    await caughtUp(b);
    expect(tenantOf(b).catalog.holds('i1')).toBe(true);

    expect(await deleteItems(a, tenantOf(a), ['i1'], () => undefined)).toBe(1);
    await caughtUp(b);
    expect(tenantOf(b).catalog.holds('i1')).toBe(false);
    expect(tenantOf(b).catalog.holds('i2')).toBe(true);
    expect([...tenantOf(b).interactionEventIds].sort()).toEqual(['e2', 's1']);
    expect(deleted.b).toEqual(['items of t']);

    expect(await mergeIdentity(b, tenantOf(b), 'u9', ['anon'])).toEqual({ merged: 1, alreadyMerged: false });
    await caughtUp(a);
    expect(tenantOf(a).hasMerged('u9', 'anon')).toBe(true);
    expect(tenantOf(a).histories.get('u9')?.length).toBe(1);
    expect(tenantOf(a).interactionTotal).toBe(tenantOf(b).interactionTotal);
    // The merge is known there: repeating it on the other daemon copies nothing.
    expect(await mergeIdentity(a, tenantOf(a), 'u9', ['anon'])).toEqual({ merged: 0, alreadyMerged: true });

    await upsertUsers(a, tenantOf(a), [{ externalId: 'u1' }]);
    await deleteUser(b, tenantOf(b), 'u1', () => undefined);
    await caughtUp(a);
    expect(tenantOf(a).users.has('u1')).toBe(false);
    expect(tenantOf(a).histories.get('u1')).toBeUndefined();
    expect(deleted.a).toEqual(['u1 of t']);
    // Once deleted, nothing in the log names them: the deletions name what they deleted by hashes.
    expect(await logNaming(['i1', 'u1'])).toEqual([]);
    expect(await logNaming(['i2', 'u9', 'anon'])).not.toEqual([]);
    // A merged user deleted: its merge leaves the log too, and the other daemon forgets both.
    await deleteUser(a, tenantOf(a), 'u9', () => undefined);
    await caughtUp(b);
    expect(tenantOf(b).hasMerged('u9', 'anon')).toBe(false);
    expect(tenantOf(b).histories.get('u9')).toBeUndefined();
    expect(deleted.b).toEqual(['items of t', 'anon,u9 of t']);
    expect(await logNaming(['u9', 'anon'])).toEqual([]);
  });

  it('catches up at start with what was written while it was down, and leaves out its own', async () => {
    await createTenant(a, 't');
    await upsertItems(a, tenantOf(a), [{ externalId: 'i1' }]);
    await caughtUp(b);
    await closeRuntime(b);
    await appendInteractions(a, tenantOf(a), [interaction('e1', 'u1', 'i1')]);
    await upsertItems(a, tenantOf(a), [{ externalId: 'i2' }]);
    b = await open(deleted.b);
    await upsertItems(b, tenantOf(b), [{ externalId: 'i3' }]);
    await appendInteractions(b, tenantOf(b), [interaction('e2', 'u1', 'i3')]);
    await appendInteractions(a, tenantOf(a), [interaction('e3', 'u1', 'i2')]);
    await caughtUp(b);
    await caughtUp(a);
    for (const runtime of [a, b]) {
      const tenant = tenantOf(runtime);
      expect(['i1', 'i2', 'i3'].map((id) => tenant.catalog.holds(id))).toEqual([true, true, true]);
      expect(tenant.interactionTotal).toBe(3);
      expect(tenant.histories.get('u1')?.length).toBe(3);
    }
  });

  it('go on following when the listening connection breaks', async () => {
    await createTenant(a, 't');
    await caughtUp(b);
    // Every daemon's listening connection ends (a server restart, a network failure would do the same).
    const listening =
      "FROM pg_stat_activity WHERE application_name = 'nextrec-changes' AND datname = current_database()";
    const admin = new pg.Client({ connectionString: storeUrl });
    await admin.connect();
    try {
      expect((await admin.query(`SELECT pg_terminate_backend(pid) ${listening}`)).rowCount).toBe(2);
      // Each connects again a moment later.
      const again = Date.now() + 5_000;
      let count = 0;
      while (count < 2 && Date.now() < again) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        count = Number((await admin.query(`SELECT count(*) ${listening}`)).rows[0].count);
      }
      expect(count).toBe(2);
    } finally {
      await admin.end();
    }
    // Written whether or not anyone listens yet: the counters read every second find it.
    await upsertItems(a, tenantOf(a), [{ externalId: 'i1' }]);
    const deadline = Date.now() + 5_000;
    while (!tenantOf(b).catalog.holds('i1') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect(tenantOf(b).catalog.holds('i1')).toBe(true);
    // And it listens again.
    await upsertItems(a, tenantOf(a), [{ externalId: 'i2' }]);
    await caughtUp(b);
    expect(tenantOf(b).catalog.holds('i2')).toBe(true);
  });

  it('say so when the log lost changes they had not applied', async () => {
    await createTenant(a, 't');
    await closeRuntime(b);
    b = await open(undefined);
    await upsertItems(a, tenantOf(a), [{ externalId: 'i1' }]);
    await upsertItems(a, tenantOf(a), [{ externalId: 'i2' }]);
    // As if it had followed more than the log keeps: the first of them left it.
    const admin = new pg.Client({ connectionString: storeUrl });
    await admin.connect();
    try {
      await admin.query(
        "DELETE FROM change_log WHERE payload->>'kind' = 'items' AND payload->'itemIds' ? 'i1'",
      );
    } finally {
      await admin.end();
    }
    start(b, deleted.b);
    await caughtUp(b);
    expect(tenantOf(b).catalog.holds('i2')).toBe(true);
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/ChangesLostError: changes \d+ to \d+ of tenant 't' left the log/);
    failures = [];
  });
});
