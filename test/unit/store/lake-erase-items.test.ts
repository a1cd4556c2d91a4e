import { sqlOp } from '../../../src/store/api/ops.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveSegments, snapshots, tableDir } from '../../../src/lake/layout.js';
import { LakeExporter, exportTenantLake } from '../../../src/store/lake-export.js';
import type { RowBuffer } from '../../../src/store/rows.js';
import { sqlString } from '../../../src/store/sql.js';
import { filesNaming, lakeFiles } from '../../support/data-files.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

const TENANT = 'shop';
/** An id no other id contains, so that its bytes in a file mean that the file names it. */
const GONE = 'zz-gone-item-zz';

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-lake-erase-items-');
});

afterEach(() => closeTempStore(temp));

function write(fill: (rows: RowBuffer) => void): Promise<void> {
  return temp.store.writes.submit((rows) => {
    fill(rows);
    return () => undefined;
  });
}

async function rows(table: 'interactions' | 'impressions' | 'items', columns: string): Promise<unknown[][]> {
  const dir = tableDir(temp.dir, TENANT, table);
  const files =
    table === 'items' ? [snapshots(dir).at(-1)!.file] : liveSegments(dir).map((segment) => segment.file);
  const source = `read_parquet([${files.map(sqlString).join(', ')}])`;
  return temp.store.read(async (db) =>
    (await db.runAndReadAll(`SELECT ${columns} FROM ${source} ORDER BY ALL`)).getRowsJS(),
  );
}

describe('eraseItemsFromLake', () => {
  it('removes the items, their interactions and their places in impressions, keeping the rest', async () => {
    await write((rows) => {
      for (const externalId of ['a', GONE, 'b']) {
        const item = { externalId, category: null, attributes: {}, expiresAt: null, available: true };
        rows.items.set(externalId, [TENANT, { ...item, feedManaged: false, createdAt: 1, updatedAt: 1 }]);
      }
      for (const [i, itemId] of ['a', GONE, 'b', GONE].entries())
        rows.interactions.push([TENANT, storedInteraction(`e${i}`, { itemId })]);
      const shown = (eventId: string, itemIds: string[]) => ({
        eventId,
        userId: 'u',
        itemIds,
        scenarioSlug: null,
        country: null,
        recommId: null,
        ts: 1,
        receivedAt: 1,
      });
      rows.impressions.push(
        [TENANT, shown('p0', ['b', GONE, 'a'])],
        [TENANT, shown('p1', [GONE])],
        [TENANT, shown('p2', ['a'])],
      );
    });
    await exportTenantLake(temp.store, temp.dir, TENANT);
    expect(filesNaming(GONE, lakeFiles(temp.dir, TENANT)).length).toBeGreaterThan(0);
    // The store loses them first, as a deletion does.
    await write((rows) => {
      rows.ops.push(
        ...[
          { sql: 'DELETE FROM items WHERE external_id = $1', params: [GONE] },
          { sql: 'DELETE FROM interactions WHERE item_id = $1', params: [GONE] },
          { sql: 'DELETE FROM impressions WHERE list_contains(item_ids, $1)', params: [GONE] },
        ].map(sqlOp),
      );
    });

    // The interactions segment, the impressions segment and the items snapshot.
    expect(await new LakeExporter(temp.store, temp.dir).eraseItems(TENANT, [GONE, 'never-was'])).toBe(3);

    expect(filesNaming(GONE, lakeFiles(temp.dir, TENANT))).toEqual([]);
    expect(await rows('items', 'external_id')).toEqual([['a'], ['b']]);
    expect(await rows('interactions', 'event_id, item_id')).toEqual([
      ['e0', 'a'],
      ['e2', 'b'],
    ]);
    // An impression keeps the other items it showed, in order; one of the gone item alone goes.
    expect(await rows('impressions', 'event_id, item_ids')).toEqual([
      ['p0', ['b', 'a']],
      ['p2', ['a']],
    ]);
    expect(await new LakeExporter(temp.store, temp.dir).eraseItems(TENANT, [GONE])).toBe(0);
  });
});
