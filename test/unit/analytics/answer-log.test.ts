import { describe, expect, it } from 'vitest';
import { AnswerLog } from '../../../src/analytics/answer-log.js';
import type { Store } from '../../../src/store/database.js';
import type { Statement } from '../../../src/store/rows.js';

/** A store whose write queue only collects the statements submitted to it. */
function collectingStore(statements: Statement[]): Store {
  const writes = {
    submit: async (job: (rows: { statements: Statement[] }, scratch: Map<string, unknown>) => unknown) => {
      const rows = { statements: [] as Statement[] };
      job(rows, new Map());
      statements.push(...rows.statements);
    },
  };
  return { writes } as unknown as Store;
}

describe('the answer record', () => {
  it("records an answer's own fields, whatever follows them (a filter relaxation, search facets)", async () => {
    const statements: Statement[] = [];
    const log = new AnswerLog(collectingStore(statements));
    const relaxed =
      '{"items":[{"itemId":"a","score":1},{"itemId":"b]","score":0.5}],"count":2,"algorithm":"co-occurrence",' +
      '"scenario":"home-b","experiment":{"slug":"home-test","variant":"home-b"},' +
      '"filterRelaxation":{"droppedClauses":["\'x\' in {1}"],"effectiveFilter":null,"droppedEntireFilter":true,"originalFilter":"x"}';
    log.record('t1', 'r1', 'u1', relaxed, 5);
    await log.flush(10);
    const insert = statements.find((statement) => statement.sql.startsWith('INSERT INTO answers'))!;
    expect(insert.params).toEqual([
      't1',
      'r1',
      5,
      'u1',
      'home-b',
      'co-occurrence',
      'home-test',
      '["a","b]"]',
    ]);
  });
});
