import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVALUATION_TENANT, evaluate, type EvaluationReport } from '../../../jobs/evaluate/evaluate.js';
import { currentVersion, modelDir } from '../../../src/artifacts/layout.js';
import { openVersion } from '../../../src/artifacts/open.js';
import { PipelineHarness } from '../../../src/evaluation/harness.js';

/**
 * Two audiences of 40 users, each using 20 of its own 30 items and one of the other's: what a user
 * holds out is predictable from their audience, but not from popularity, since both halves of the
 * catalog are used about as much.
 */
function plantedCsv(): string {
  let state = 7;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const lines = ['userId,movieId,timestamp'];
  for (let user = 0; user < 80; user++) {
    const own = user % 2 === 0 ? 'a' : 'b';
    const other = own === 'a' ? 'b' : 'a';
    const items = new Set<number>();
    while (items.size < 20) items.add(Math.floor(random() * 30));
    let ts = 1_600_000_000 + user;
    for (const item of items) lines.push(`u${user},${own}${item},${(ts += 60)}`);
    lines.push(`u${user},${other}${Math.floor(random() * 30)},${(ts += 60)}`);
  }
  return lines.join('\n') + '\n';
}

describe('nextrec evaluate, end to end', () => {
  let dir: string;
  let report: EvaluationReport;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'nextrec-evaluate-test-'));
    const file = path.join(dir, 'ratings.csv');
    writeFileSync(file, plantedCsv());
    const now = Date.UTC(2026, 0, 1);
    report = await evaluate({
      dataset: { file },
      split: 'random',
      seed: 2020,
      algorithms: [
        { name: 'weighted-history', models: ['ease', 'cooccurrence'] },
        { name: 'matrix-factorization', models: ['factors'] },
      ],
      harness: new PipelineHarness(now),
      now,
      // In this thread: the jobs' worker modules exist only compiled.
      threads: 1,
      keepArtifacts: path.join(dir, 'data'),
    });
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('splits every user 80/10/10 and measures the baselines beside each algorithm', () => {
    expect(report.dataset).toEqual({
      events: 1680,
      users: 80,
      items: 60,
      train: 1360,
      valid: 160,
      test: 160,
    });
    expect(report.rows.map((row) => row.name)).toEqual([
      'baseline: most popular',
      'baseline: item-kNN (cosine, 100 neighbours)',
      'weighted-history',
      'matrix-factorization',
    ]);
    for (const row of report.rows) expect(row.users).toBe(80);
  });

  it('ranks through the built models: both algorithms find the audience that popularity cannot', () => {
    const [popular, , history, factors] = report.rows;
    expect(history.ndcg).toBeGreaterThan(popular.ndcg + 0.1);
    expect(factors.ndcg).toBeGreaterThan(popular.ndcg + 0.1);
    expect(history.buildSeconds).toBeGreaterThan(0);
  });

  it('keeps the built models when asked, each manifest carrying the figures of what ranked from it', () => {
    const data = path.join(dir, 'data');
    const manifestOf = (model: 'ease' | 'cooccurrence' | 'factors') =>
      openVersion(data, EVALUATION_TENANT, model, currentVersion(modelDir(data, EVALUATION_TENANT, model))!)
        .manifest;
    const history = report.rows[2];
    for (const model of ['ease', 'cooccurrence'] as const) {
      expect(manifestOf(model).evaluation).toMatchObject({
        'weighted-history.ndcg@10': history.ndcg,
        'weighted-history.recall@10': history.recall,
        'weighted-history.users': 80,
      });
    }
    expect(manifestOf('factors').evaluation?.['matrix-factorization.ndcg@10']).toBe(report.rows[3].ndcg);
    expect(manifestOf('factors').evaluation?.['weighted-history.ndcg@10']).toBeUndefined();
  });
});
