import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AnswerLog } from '../../../src/analytics/answer-log.js';
import type { Runners } from '../../../src/store/api/runners.js';
import type { DuckDbStore as Store } from '../../../src/store/database.js';
import { closeTempStore, openTempStore, type TempStore } from '../../support/temp-store.js';

const DAY_MS = 86_400_000;
const DAY = 20_000;
const AT = DAY * DAY_MS;

let store: Store;

let temp: TempStore;

beforeEach(async () => {
  temp = await openTempStore('nextrec-answers-');
  store = temp.store;
});

afterEach(() => closeTempStore(temp));

function answer(itemIds: string[], algorithm: string, more = ''): string {
  return `{"items":[${itemIds.map((id) => `{"itemId":${JSON.stringify(id)},"score":1}`).join(',')}],"count":${itemIds.length},"algorithm":"${algorithm}"${more}`;
}

/** What an answer of the home-test experiment's home-b variant says after its list. */
const experiment = ',"scenario":"home-b","experiment":{"slug":"home-test","variant":"home-b"}';

const query = (sql: string) =>
  store.read(async (db) => (await db.runAndReadAll(sql)).getRowsJS().map((row) => row.map(String)));

describe('the answer record', () => {
  it('rolls answers up by day with their own fields, whatever follows them (a filter relaxation, search facets)', async () => {
    const log = new AnswerLog(store);
    const relaxed = answer(
      ['a', 'b]'],
      'co-occurrence',
      ',"scenario":"home-b","experiment":{"slug":"home-test","variant":"home-b"},' +
        '"filterRelaxation":{"droppedClauses":["\'x\' in {1}"],"effectiveFilter":null,"droppedEntireFilter":true,"originalFilter":"x"}',
    );
    log.record('t1', 'u1', relaxed, AT + 5);
    log.record('t1', 'u1', relaxed, AT + 6);
    log.record('t1', 'u2', relaxed, AT + DAY_MS + 1);
    log.record(
      't1',
      undefined,
      answer(['c'], 'popularity', ',"facets":{"categories":[]},"query":{"original":"x"}'),
      AT,
    );
    log.record('t2', 'u1', answer(['z'], 'popularity'), AT);
    await log.flush(AT + DAY_MS + 10);
    expect(await query('SELECT * FROM answer_days ORDER BY ALL')).toEqual([
      ['t1', `${DAY}`, '', 'popularity', '', '1'],
      ['t1', `${DAY}`, 'home-b', 'co-occurrence', 'home-test', '2'],
      ['t1', `${DAY + 1}`, 'home-b', 'co-occurrence', 'home-test', '1'],
      ['t2', `${DAY}`, '', 'popularity', '', '1'],
    ]);
    expect(await query('SELECT * FROM answer_items ORDER BY ALL')).toEqual([
      ['t1', `${DAY}`, 'a'],
      ['t1', `${DAY}`, 'b]'],
      ['t1', `${DAY}`, 'c'],
      ['t1', `${DAY + 1}`, 'a'],
      ['t1', `${DAY + 1}`, 'b]'],
      ['t2', `${DAY}`, 'z'],
    ]);
    // Users only where an experiment needs them.
    expect(await query('SELECT * FROM experiment_users ORDER BY ALL')).toEqual([
      ['t1', `${DAY}`, 'home-test', 'home-b', 'u1'],
      ['t1', `${DAY + 1}`, 'home-test', 'home-b', 'u2'],
    ]);
  });

  it('never throws for an answer it cannot read: it goes unrecorded and is counted', async () => {
    const log = new AnswerLog(store);
    expect(() => log.record('t1', 'u1', '{"items":[{"itemId":"a"', AT)).not.toThrow();
    expect(() => log.record('t1', 'u1', 'not an answer', AT)).not.toThrow();
    log.record('t1', 'u1', answer(['a'], 'popularity'), AT);
    expect(log.dropped).toBe(2);
    await log.flush(AT);
    expect(await query('SELECT item_id FROM answer_items')).toEqual([['a']]);
  });

  it('adds to the counts of a day already written, and writes each item and user of a day once, across restarts', async () => {
    const first = new AnswerLog(store);
    const body = answer(
      ['a', 'b'],
      'weighted-history',
      ',"scenario":"s","experiment":{"slug":"e","variant":"s"}',
    );
    first.record('t1', 'u1', body, AT);
    await first.flush(AT);
    first.record('t1', 'u1', body, AT + 1);
    await first.flush(AT + 1);
    // A new record (as after a restart) knows nothing of what was written.
    const second = new AnswerLog(store);
    second.record(
      't1',
      'u1',
      answer(['b', 'c'], 'weighted-history', ',"scenario":"s","experiment":{"slug":"e","variant":"s"}'),
      AT + 2,
    );
    await second.flush(AT + 2);
    expect(await query('SELECT answers FROM answer_days')).toEqual([['3']]);
    expect(await query('SELECT item_id, count(*) FROM answer_items GROUP BY ALL ORDER BY ALL')).toEqual([
      ['a', '1'],
      ['b', '1'],
      ['c', '1'],
    ]);
    expect(await query('SELECT count(*) FROM experiment_users')).toEqual([['1']]);
  });

  it('learns the rows written before a restart, but not those of a user deleted while it reads them', async () => {
    const first = new AnswerLog(store);
    first.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    await first.flush(AT);
    const second = new AnswerLog(store);
    const rowsFrom = store.analytics.answerRecordRows;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(store.analytics, 'answerRecordRows').mockImplementationOnce(async (fromDay) => {
      const rows = await rowsFrom(fromDay);
      await gate;
      return rows;
    });
    second.record('t1', 'u2', answer(['a'], 'popularity', experiment), AT);
    const writing = second.flush(AT);
    // u1 is deleted while the new record reads what the first wrote: its rows are purged after.
    second.forget('t1', ['u1']);
    const purging = second.purge('t1', ['u1']);
    release();
    await writing;
    await purging;
    expect(await query('SELECT user_id FROM experiment_users')).toEqual([['u2']]);
    // u1 comes back the same day, and is written again; item a stays written once.
    second.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    await second.flush(AT);
    expect(await query('SELECT user_id FROM experiment_users ORDER BY ALL')).toEqual([['u1'], ['u2']]);
    expect(await query('SELECT item_id, count(*) FROM answer_items GROUP BY ALL')).toEqual([['a', '1']]);
  });

  it("removes days past the retention, and the held rows of forgotten users (their counts and items are no one's)", async () => {
    const log = new AnswerLog(store);
    log.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    log.record('t1', 'u2', answer(['b'], 'popularity', experiment), AT);
    log.record('t2', 'u1', answer(['c'], 'popularity', experiment), AT);
    log.forget('t1', ['u1']);
    await log.flush(AT);
    expect(await query('SELECT tenant_id, user_id FROM experiment_users ORDER BY ALL')).toEqual([
      ['t1', 'u2'],
      ['t2', 'u1'],
    ]);
    expect(await query('SELECT item_id FROM answer_items ORDER BY ALL')).toEqual([['a'], ['b'], ['c']]);
    expect(await query('SELECT tenant_id, answers FROM answer_days ORDER BY ALL')).toEqual([
      ['t1', '2'],
      ['t2', '1'],
    ]);
    // Where another daemon sharing the store runs the retention, this one removes nothing.
    const elsewhere: Runners = {
      claim: async () => false,
      exclusive: (_kind, _tenantId, task) => task(),
      claims: () => [],
    };
    await new AnswerLog(Object.create(store, { runners: { value: elsewhere } }) as Store).flush(
      AT + 401 * DAY_MS,
    );
    expect(await query('SELECT count(*) FROM answer_days')).toEqual([['2']]);
    await new AnswerLog(store).flush(AT + 401 * DAY_MS);
    expect(await query('SELECT count(*) FROM answer_items')).toEqual([['0']]);
    expect(await query('SELECT count(*) FROM answer_days')).toEqual([['0']]);
    expect(await query('SELECT count(*) FROM experiment_users')).toEqual([['0']]);
  });

  it('holds rolled-up rows, not answers: a second of answers naming the same items and users holds a row each', async () => {
    const log = new AnswerLog(store);
    for (let i = 0; i < 1_000; i++)
      log.record(
        't1',
        `u${i % 20}`,
        answer([`i${i % 50}`, `i${(i + 1) % 50}`], 'popularity', experiment),
        AT,
      );
    // One count, 50 items, 20 users.
    expect(log.held).toBe(71);
    await log.flush(AT);
    expect(log.held).toBe(0);
    // Rows written today are not held again.
    log.record('t1', 'u0', answer(['i0', 'i1'], 'popularity', experiment), AT + 1);
    expect(log.held).toBe(1);
    await log.flush(AT + 1);
    expect(await query('SELECT answers FROM answer_days')).toEqual([['1001']]);
    expect(await query('SELECT count(*) FROM answer_items')).toEqual([['50']]);
    expect(await query('SELECT count(*) FROM experiment_users')).toEqual([['20']]);
  });

  it('holds at most its bound of rows between two writes: what an answer adds beyond it goes unrecorded, and is counted', async () => {
    const log = new AnswerLog(store);
    for (let i = 0; i < 20_005; i++) log.record('t1', undefined, answer([`i${i}`], 'popularity'), AT);
    // The count's row and 19,999 items: the last six answers still count, but their items are left out.
    log.record('t1', undefined, answer(['i0'], 'popularity'), AT);
    expect(log.held).toBe(20_000);
    expect(log.dropped).toBe(6);
    await log.flush(AT);
    expect(await query('SELECT answers FROM answer_days')).toEqual([['20006']]);
    expect(await query('SELECT count(*) FROM answer_items')).toEqual([['19999']]);
    // An item left out is held by the next answer naming it.
    log.record('t1', undefined, answer(['i20000'], 'popularity'), AT);
    await log.flush(AT);
    expect(await query('SELECT count(*) FROM answer_items')).toEqual([['20000']]);
  });

  it('keeps the rows of the other users held when a user is forgotten, once each', async () => {
    const log = new AnswerLog(store);
    log.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    log.record('t1', 'u2', answer(['a'], 'popularity', experiment), AT);
    log.forget('t1', ['u1']);
    log.record('t1', 'u2', answer(['a'], 'popularity', experiment), AT);
    // A count, an item, and u2.
    expect(log.held).toBe(3);
    // Served again after its deletion, a user of the same id is a new row.
    log.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    expect(log.held).toBe(4);
    await log.flush(AT);
    expect(await query('SELECT user_id FROM experiment_users ORDER BY ALL')).toEqual([['u1'], ['u2']]);
  });

  it('holds again the rows of a write that failed, those of answers given meanwhile included', async () => {
    const log = new AnswerLog(store);
    let fail!: (error: Error) => void;
    const writing = vi
      .spyOn(store.analytics, 'answerRecordWrite')
      .mockReturnValueOnce(new Promise((_, reject) => (fail = reject)));
    log.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    log.record('t1', 'u2', answer(['b'], 'popularity', experiment), AT);
    const failing = log.flush(AT);
    await vi.waitFor(() => expect(writing).toHaveBeenCalled());
    // Given while the write runs: their item and user are those the write holds.
    log.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    log.forget('t1', ['u2']);
    fail(new Error('disk full'));
    await expect(failing).rejects.toThrow('disk full');
    await log.flush(AT);
    expect(await query('SELECT answers FROM answer_days')).toEqual([['3']]);
    expect(await query('SELECT item_id FROM answer_items ORDER BY ALL')).toEqual([['a'], ['b']]);
    expect(await query('SELECT user_id FROM experiment_users')).toEqual([['u1']]);
  });

  it('writes beside the write queue, so that an ingestion commit never waits for the record', async () => {
    const log = new AnswerLog(store);
    for (let i = 0; i < 2_000; i++) log.record('t1', `u${i}`, answer([`i${i}`], 'popularity'), AT);
    // The queue is held by a write that ends only when told: a record written through it would wait.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const holding = store.writes.exclusive(() => held);
    try {
      const waited = new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the record waited for the write queue')), 5_000),
      );
      await Promise.race([log.flush(AT), waited]);
      expect(await query('SELECT answers FROM answer_days')).toEqual([['2000']]);
      expect(await query('SELECT count(*) FROM answer_items')).toEqual([['2000']]);
    } finally {
      release();
    }
    await holding;
  });

  it("purges deleted users' rows after the write in progress, and writes again what a failed write left out", async () => {
    const log = new AnswerLog(store);
    log.record('t1', 'u1', answer(['a'], 'popularity', experiment), AT);
    log.record('t1', 'u2', answer(['b'], 'popularity', experiment), AT);
    const writing = log.flush(AT);
    // Asked while the write runs: it removes what that write adds.
    const purging = log.purge('t1', ['u1']);
    await writing;
    await purging;
    expect(await query('SELECT user_id FROM experiment_users')).toEqual([['u2']]);

    vi.spyOn(store.analytics, 'answerRecordWrite').mockRejectedValueOnce(new Error('disk full'));
    log.record('t1', 'u3', answer(['c'], 'popularity', experiment), AT);
    await expect(log.flush(AT)).rejects.toThrow('disk full');
    // The next answers naming the same item and user get their rows written after all.
    log.record('t1', 'u3', answer(['c'], 'popularity', experiment), AT);
    await log.flush(AT);
    expect(await query("SELECT item_id FROM answer_items WHERE item_id = 'c'")).toEqual([['c']]);
    expect(await query("SELECT user_id FROM experiment_users WHERE user_id = 'u3'")).toEqual([['u3']]);
  });

  it('looks a summary given again up no more that day, and again once an item of it was deleted', async () => {
    const log = new AnswerLog(store);
    const summary = { itemIds: ['a', 'b'], algorithm: 'popularity', scenario: '', experiment: '' };
    log.record('t1', 'u1', summary, AT);
    log.record('t1', 'u1', summary, AT + 1);
    expect(log.held).toBe(3);
    await log.flush(AT + 2);
    log.forgetItems('t1', ['b']);
    await log.purgeItems('t1', ['b']);
    expect(await query("SELECT item_id FROM answer_items WHERE tenant_id = 't1' ORDER BY ALL")).toEqual([
      ['a'],
    ]);
    // The same summary, from the answer cache: 'b' is held again, and written.
    log.record('t1', 'u1', summary, AT + 3);
    expect(log.held).toBe(2);
    await log.flush(AT + 4);
    expect(await query("SELECT item_id FROM answer_items WHERE tenant_id = 't1' ORDER BY ALL")).toEqual([
      ['a'],
      ['b'],
    ]);
    expect(await query("SELECT answers FROM answer_days WHERE tenant_id = 't1'")).toEqual([['3']]);
  });
});
