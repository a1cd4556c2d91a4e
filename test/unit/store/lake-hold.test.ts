import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveSegments, snapshots, tableDir } from '../../../src/lake/layout.js';
import { rowKey } from '../../../src/store/rows.js';
import { LakeExporter } from '../../../src/store/lake-export.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

const TENANT = 'shop';
const DELAY_MS = 20;

let temp: TempStore;
let exporter: LakeExporter;
let nextEvent = 0;

beforeEach(async () => {
  temp = await openTempStore('nextrec-lake-hold-');
  exporter = new LakeExporter(temp.store, temp.dir, DELAY_MS);
  exporter.follow((error) => {
    throw error;
  });
});
afterEach(async () => {
  await exporter.stop();
  await closeTempStore(temp);
});

/**
 * Commits an interaction to the store: it is acknowledged from the interactions log, which the daemon moves
 * into the store within seconds (docs/guide.md, "Ingestion") and a reader moves at once, as here.
 */
async function commitInteraction(): Promise<void> {
  await temp.store.writes.submit((rows) => {
    rows.interactions.push([TENANT, storedInteraction(`event-${nextEvent++}`)]);
    return () => undefined;
  });
  await temp.store.writes.settled();
}

const exported = () => liveSegments(tableDir(temp.dir, TENANT, 'interactions')).length;

/** Waits until `done` holds, at most 10 s. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
}

describe("holding a tenant's lake exports", () => {
  it('exports after a commit by itself, and only once released while held', async () => {
    await commitInteraction();
    await until(() => exported() === 1);

    const release = exporter.hold(TENANT);
    const again = exporter.hold(TENANT);
    await commitInteraction();
    await sleep(DELAY_MS * 10);
    expect(exported()).toBe(1);
    // Held until the last hold is released; releasing one twice counts once.
    release();
    release();
    await sleep(DELAY_MS * 10);
    expect(exported()).toBe(1);
    again();
    await until(() => exported() === 2);
    // An export asked for (a model build's) is not held.
    const held = exporter.hold(TENANT);
    await commitInteraction();
    await exporter.flush(TENANT);
    expect(exported()).toBe(3);
    held();
  });

  it('exports what came due while held when it stops', async () => {
    exporter.hold(TENANT);
    await commitInteraction();
    await sleep(DELAY_MS * 10);
    expect(exported()).toBe(0);
    await exporter.stop();
    expect(exported()).toBe(1);
  });
});

describe('an export of the event tables alone', () => {
  it('writes new events and leaves the catalog to an export of every table', async () => {
    await temp.store.writes.submit((rows) => {
      const item = { externalId: 'i', category: null, attributes: {}, expiresAt: null, available: true };
      rows.items.set(rowKey(TENANT, 'i'), [
        TENANT,
        { ...item, feedManaged: false, createdAt: 1, updatedAt: 1 },
      ]);
      rows.interactions.push([TENANT, storedInteraction('event-a', { itemId: 'i' })]);
      return () => undefined;
    });
    const items = () => snapshots(tableDir(temp.dir, TENANT, 'items')).length;
    expect((await exporter.flush(TENANT, 'events')).map(({ table }) => table)).toEqual([
      'interactions',
      'impressions',
    ]);
    expect([exported(), items()]).toEqual([1, 0]);
    await exporter.flush(TENANT);
    expect([exported(), items()]).toEqual([1, 1]);
  });
});

describe('following commits', () => {
  /** Commits pause for longer than this only when a test pauses them: a slow disk cannot make a pause. */
  const QUIET_MS = 300;

  /**
   * Commits a user row of the tenant every few ms for `ms`: each commit reaches the store at once (an
   * impression beside the user takes it there; a user alone would wait in the records log for a move).
   */
  async function commitUsersFor(ms: number): Promise<void> {
    const end = Date.now() + ms;
    for (let n = 0; Date.now() < end; n++) {
      await temp.store.writes.submit((rows) => {
        const user = { externalId: `user-${n}`, attributes: {}, createdAt: n, updatedAt: n };
        rows.users.set(rowKey(TENANT, user.externalId), [TENANT, user]);
        const impression = { eventId: null, userId: user.externalId, itemIds: ['i'], scenarioSlug: null };
        rows.impressions.push([
          TENANT,
          { ...impression, country: null, recommId: null, ts: n, receivedAt: n },
        ]);
        return () => undefined;
      });
      await sleep(10);
    }
  }
  const exportedUsers = () => snapshots(tableDir(temp.dir, TENANT, 'users')).length;

  /** An exporter that follows the store's commits instead of the one every test starts with. */
  async function following(maxDelayMs: number, during: () => Promise<void>): Promise<void> {
    const exporter = new LakeExporter(temp.store, temp.dir, QUIET_MS, maxDelayMs);
    exporter.follow((error) => {
      throw error;
    });
    try {
      await during();
    } finally {
      await exporter.stop();
    }
  }

  it('exports once commits pause, not while they go on', async () => {
    await following(60_000, async () => {
      await commitUsersFor(QUIET_MS * 4);
      expect(exportedUsers()).toBe(0);
      await until(() => exportedUsers() === 1);
    });
  });

  it('exports the catalog with the events at most once per longest delay, and by itself once that is over', async () => {
    const items = () => snapshots(tableDir(temp.dir, TENANT, 'items')).length;
    const commitItem = (n: number) =>
      temp.store.writes.submit((rows) => {
        const item = {
          externalId: `i${n}`,
          category: null,
          attributes: {},
          expiresAt: null,
          available: true,
        };
        rows.items.set(rowKey(TENANT, item.externalId), [
          TENANT,
          { ...item, feedManaged: false, createdAt: n, updatedAt: n },
        ]);
        rows.interactions.push([
          TENANT,
          storedInteraction(`event-${nextEvent++}`, { itemId: item.externalId }),
        ]);
        return () => undefined;
      });
    // This test's exporter alone follows the commits.
    await exporter.stop();
    await following(QUIET_MS * 20, async () => {
      // The first export writes the catalog too.
      await commitItem(1);
      await until(() => exported() === 1 && items() === 1);
      // Within the longest delay of that, an export that follows commits writes the events alone...
      await commitItem(2);
      await until(() => exported() === 2);
      await sleep(QUIET_MS);
      expect(items()).toBe(1);
      // ...and the catalog follows by itself, with no commit after it.
      await until(() => items() === 2);
      expect(exported()).toBe(2);
    });
  });

  it('exports commits that never pause once the longest delay is over', async () => {
    await following(QUIET_MS * 2, async () => {
      await commitUsersFor(QUIET_MS * 5);
      expect(exportedUsers()).toBeGreaterThan(0);
    });
  });
});
