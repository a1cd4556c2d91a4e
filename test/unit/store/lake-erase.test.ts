import { sqlOp } from '../../../src/store/api/ops.js';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { coveredSegments, liveSegments, snapshots, tableDir } from '../../../src/lake/layout.js';
import { DuckDbStore } from '../../../src/store/database.js';
import { LakeExporter, eraseFromLake, exportTenantLake } from '../../../src/store/lake-export.js';
import { sqlString } from '../../../src/store/sql.js';
import type { RowBuffer, StoredImpression, StoredInteraction } from '../../../src/store/rows.js';
import { filesNaming, lakeFiles } from '../../support/data-files.js';
import { closeTempStore, openTempStore, type TempStore } from '../../support/temp-store.js';

const TENANT = 'shop';
/** The erased user, and a session of theirs that no row ties to the user id. */
const ERASED_USER = 'zz-erase-me-zz';
const ERASED_SESSION = `zz-sess'ion "erase" ${'x'.repeat(480)}`;
const ERASED = [ERASED_USER, ERASED_SESSION];

let dir: string;
let store: DuckDbStore;
let nextEvent = 0;

function interaction(userId: string | null, sessionId: string | null): StoredInteraction {
  return {
    eventId: `event-${nextEvent++}`,
    userId,
    sessionId,
    itemId: 'item',
    type: 'view',
    weight: 1,
    scenarioSlug: null,
    country: null,
    ts: 1,
    receivedAt: 1,
  };
}

function impression(userId: string | null): StoredImpression {
  return {
    eventId: `impression-${nextEvent++}`,
    userId,
    itemIds: ['a', 'b'],
    scenarioSlug: null,
    country: null,
    recommId: null,
    ts: 1,
    receivedAt: 1,
  };
}

function write(fill: (rows: RowBuffer) => void): Promise<void> {
  return store.writes.submit((rows) => {
    fill(rows);
    return () => undefined;
  });
}

/** `n` interactions and impressions of other people, and a user row for each name. */
function others(rows: RowBuffer, n: number, users: string[] = []): void {
  for (let i = 0; i < n; i++) {
    rows.interactions.push([TENANT, interaction(`other-${i % 5}`, `other-session-${i % 3}`)]);
    rows.interactions.push([TENANT, interaction(null, `anonymous-${i % 4}`)]);
    rows.impressions.push([TENANT, impression(`other-${i % 5}`)]);
  }
  for (const externalId of users)
    rows.users.set(externalId, [TENANT, { externalId, attributes: {}, createdAt: 1, updatedAt: nextEvent }]);
}

/** Rows of the erased identities: as user id, as session id, in impressions, and the user row. */
function erased(rows: RowBuffer, n: number): void {
  for (let i = 0; i < n; i++) {
    rows.interactions.push([TENANT, interaction(ERASED_USER, `their-session-${i}`)]);
    rows.interactions.push([TENANT, interaction(null, ERASED_SESSION)]);
    rows.impressions.push([TENANT, impression(ERASED_USER)]);
  }
  rows.users.set(ERASED_USER, [
    TENANT,
    { externalId: ERASED_USER, attributes: {}, createdAt: 1, updatedAt: 1 },
  ]);
}

async function lakeRows(
  sql: (files: string) => string,
  table: 'interactions' | 'impressions',
): Promise<unknown[][]> {
  const files = liveSegments(tableDir(dir, TENANT, table))
    .map((segment) => sqlString(segment.file))
    .join(', ');
  return store.read(async (db) => (await db.runAndReadAll(sql(`read_parquet([${files}])`))).getRowsJS());
}

async function latestUsers(): Promise<string[]> {
  const latest = snapshots(tableDir(dir, TENANT, 'users')).at(-1)!;
  return store.read(async (db) =>
    (await db.runAndReadAll(`SELECT external_id FROM read_parquet(${sqlString(latest.file)}) ORDER BY 1`))
      .getRowsJS()
      .map((row) => String(row[0])),
  );
}

/** Deletes the erased identities' rows from the store, as a user deletion does before the lake's turn. */
function deleteFromStore(): Promise<void> {
  return write((rows) => {
    for (const id of ERASED) {
      rows.ops.push(
        ...[
          { sql: 'DELETE FROM interactions WHERE user_id = $1 OR session_id = $1', params: [id] },
          { sql: 'DELETE FROM impressions WHERE user_id = $1', params: [id] },
          { sql: 'DELETE FROM users WHERE external_id = $1', params: [id] },
        ].map(sqlOp),
      );
    }
  });
}

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-lake-erase-');
  ({ dir, store } = temp);
});

afterEach(() => closeTempStore(temp));

describe('eraseFromLake', () => {
  it('rewrites the files holding the identities without their rows and leaves the rest', async () => {
    const keep = { compaction: { smallBytes: 1 << 30, maxSegments: 16, graceMs: 3_600_000 } };
    // Segment 1: only others. Segment 2: mixed. Then a merge of both, which leaves them covered.
    await write((rows) => others(rows, 50, ['kept-user']));
    await exportTenantLake(store, dir, TENANT, keep.compaction);
    await write((rows) => {
      others(rows, 50);
      erased(rows, 20);
      others(rows, 10);
    });
    await exportTenantLake(store, dir, TENANT, keep.compaction);
    await exportTenantLake(store, dir, TENANT, { ...keep.compaction, maxSegments: 1 });
    // Segment 3: only the erased identities' events.
    await write((rows) => erased(rows, 5));
    await exportTenantLake(store, dir, TENANT, keep.compaction);

    const interactionsDir = tableDir(dir, TENANT, 'interactions');
    const [merged, onlyErased] = liveSegments(interactionsDir);
    const [onlyOthers, mixed] = coveredSegments(interactionsDir);
    expect([merged.first, merged.last, onlyErased.first]).toEqual([1, mixed.last, mixed.last + 1]);
    const untouched = readFileSync(onlyOthers.file);
    const untouchedTime = statSync(onlyOthers.file).mtimeMs;
    // Parquet pages are compressed: look for the start of the long session id, kept as a literal.
    const sessionStart = ERASED_SESSION.slice(0, 20);
    expect(filesNaming(ERASED_USER, lakeFiles(dir, TENANT)).length).toBeGreaterThan(0);
    expect(filesNaming(sessionStart, lakeFiles(dir, TENANT)).length).toBeGreaterThan(0);
    const before = await lakeRows((f) => `SELECT count(*) FROM ${f}`, 'interactions');

    await deleteFromStore();
    // Interactions: merged, mixed, only-erased; impressions: the same three; users: one snapshot.
    expect(await new LakeExporter(store, dir).erase(TENANT, ERASED)).toBe(7);

    expect(filesNaming(ERASED_USER, lakeFiles(dir, TENANT))).toEqual([]);
    expect(filesNaming(sessionStart, lakeFiles(dir, TENANT))).toEqual([]);
    expect(readFileSync(onlyOthers.file).equals(untouched)).toBe(true);
    expect(statSync(onlyOthers.file).mtimeMs).toBe(untouchedTime);
    // The emptied segment is still there, with its range and its columns.
    expect(liveSegments(interactionsDir)).toEqual([merged, onlyErased]);
    expect(
      await lakeRows((f) => `SELECT count(*), count(DISTINCT seq), min(seq) FROM ${f}`, 'interactions'),
    ).toEqual([[220n, 220n, 1n]]);
    expect(Number(before[0][0]) - 220).toBe(2 * 25);
    expect(
      await lakeRows(
        (f) => `SELECT count(*) FROM ${f} WHERE user_id LIKE 'zz%' OR session_id LIKE 'zz%'`,
        'interactions',
      ),
    ).toEqual([[0n]]);
    expect(
      await lakeRows((f) => `SELECT count(*), count(DISTINCT user_id) FROM ${f}`, 'impressions'),
    ).toEqual([[110n, 5n]]);
    expect(await latestUsers()).toEqual(['kept-user']);

    // A later export appends after the emptied segment and keeps the lake in step with the store.
    await write((rows) => others(rows, 3, ['new-user']));
    const exporter = new LakeExporter(store, dir);
    await exporter.flush(TENANT);
    const segments = liveSegments(interactionsDir);
    expect(segments).toHaveLength(3);
    expect(segments[2].first).toBe(onlyErased.last + 1);
    expect(await lakeRows((f) => `SELECT count(*), max(seq) FROM ${f}`, 'interactions')).toEqual([
      [226n, BigInt(segments[2].last)],
    ]);
    expect(await latestUsers()).toEqual(['kept-user', 'new-user']);
    expect(await exporter.erase(TENANT, ERASED)).toBe(0);
  });

  it('runs after an export in progress on the exporter, so the exported rows are erased too', async () => {
    await write((rows) => {
      others(rows, 10, ['kept-user']);
      erased(rows, 3);
    });
    const exporter = new LakeExporter(store, dir);
    const exported = exporter.flush(TENANT);
    const erasing = exporter.erase(TENANT, [ERASED_USER]);
    await exported;
    // Two segments and the users snapshot held the user.
    expect(await erasing).toBe(3);
    expect(filesNaming(ERASED_USER, lakeFiles(dir, TENANT))).toEqual([]);
    // The session id was not asked for: its rows stay.
    expect(
      await lakeRows(
        (f) => `SELECT count(*) FROM ${f} WHERE session_id = ${sqlString(ERASED_SESSION)}`,
        'interactions',
      ),
    ).toEqual([[3n]]);
  });

  it('removes what a dead export left half-written, and nothing when there is no lake', async () => {
    expect(await eraseFromLake(store, dir, TENANT, ERASED)).toBe(0);
    const usersDir = tableDir(dir, TENANT, 'users');
    await write((rows) => others(rows, 1, ['kept-user']));
    await exportTenantLake(store, dir, TENANT);
    // No process has this id (pids are below 2^22 on Linux).
    const dead = path.join(usersDir, `snapshot-0000000000000001.parquet.${2 ** 30}.partial`);
    writeFileSync(dead, ERASED_USER);
    const live = path.join(usersDir, `snapshot-0000000000000002.parquet.${process.pid}.partial`);
    writeFileSync(live, 'being written');
    expect(await eraseFromLake(store, dir, TENANT, ERASED)).toBe(0);
    expect(lakeFiles(dir, TENANT)).not.toContain(dead);
    expect(lakeFiles(dir, TENANT)).toContain(live);
  });
});
