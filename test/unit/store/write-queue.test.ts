import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../../src/store/database.js';
import type { StoredInteraction } from '../../../src/store/rows.js';

let dir: string;
let store: Store;

function interaction(eventId: string): StoredInteraction {
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
  };
}

async function storedEventIds(): Promise<string[]> {
  return store.read(async (db) =>
    (await db.runAndReadAll('SELECT event_id FROM interactions ORDER BY event_id'))
      .getRowsJS()
      .map((r) => String(r[0])),
  );
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-queue-'));
  store = await Store.open(dir);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('WriteQueue', () => {
  it('commits jobs queued together in one transaction and answers each after commit', async () => {
    const order: string[] = [];
    const results = await Promise.all(
      ['a', 'b', 'c'].map((id) =>
        store.writes.submit((rows) => {
          rows.interactions.push(['t', interaction(id)]);
          order.push(`build ${id}`);
          return () => {
            order.push(`apply ${id}`);
            return id.toUpperCase();
          };
        }),
      ),
    );
    expect(results).toEqual(['A', 'B', 'C']);
    // All jobs were built before any was applied: they shared one commit.
    expect(order).toEqual(['build a', 'build b', 'build c', 'apply a', 'apply b', 'apply c']);
    expect(await storedEventIds()).toEqual(['a', 'b', 'c']);
  });

  it('lets later jobs of a flush see earlier ones through the scratch space', async () => {
    const seen = await Promise.all(
      [1, 2].map(() =>
        store.writes.submit((_rows, scratch) => {
          const count = ((scratch.get('n') as number) ?? 0) + 1;
          scratch.set('n', count);
          return () => count;
        }),
      ),
    );
    expect(seen).toEqual([1, 2]);
  });

  it('fails only the job whose rows break the commit; its neighbours commit', async () => {
    const outcomes = await Promise.allSettled([
      store.writes.submit((rows) => {
        rows.interactions.push(['t', interaction('ok-1')]);
        return () => 'ok-1';
      }),
      store.writes.submit((rows) => {
        rows.statements.push({ sql: 'INSERT INTO no_such_table VALUES (1)', params: [] });
        return () => 'broken';
      }),
      store.writes.submit((rows) => {
        rows.interactions.push(['t', interaction('ok-2')]);
        return () => 'ok-2';
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await storedEventIds()).toEqual(['ok-1', 'ok-2']);
  });

  it('keeps one instance per file in a process', async () => {
    expect(await Store.open(dir)).toBe(store);
  });
});
