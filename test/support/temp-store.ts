import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDbStore } from '../../src/store/database.js';
import type { StoredInteraction } from '../../src/store/rows.js';

/** A store opened on a fresh temporary data dir. */
export interface TempStore {
  dir: string;
  store: DuckDbStore;
}

export async function openTempStore(prefix: string): Promise<TempStore> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, store: await DuckDbStore.open(dir) };
}

/** Closes the store and removes its data dir. */
export async function closeTempStore({ dir, store }: TempStore): Promise<void> {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

/** A stored view of item `i` by `u` at time 1, with `fields` changed. */
export function storedInteraction(
  eventId: string,
  fields: Partial<StoredInteraction> = {},
): StoredInteraction {
  return {
    eventId,
    userId: 'u',
    sessionId: null,
    itemId: 'i',
    type: 'view',
    weight: 1,
    scenarioSlug: null,
    country: null,
    ts: 1,
    receivedAt: 1,
    ...fields,
  };
}

/** The event ids of the stored interactions, in order. */
export async function storedEventIds(store: DuckDbStore): Promise<string[]> {
  return store.read(async (db) =>
    (await db.runAndReadAll('SELECT event_id FROM interactions ORDER BY event_id'))
      .getRowsJS()
      .map((row) => String(row[0])),
  );
}
