import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ModelName } from '../../src/artifacts/layout.js';
import { publishModel, recordEvaluation } from '../../src/artifacts/publish.js';
import { LakeDb } from '../lake/lake-db.js';
import { jobFor } from '../registry.js';
import { itemKnn, popularity, type Baseline } from './baselines.js';
import { readDataset, type DatasetOptions } from './dataset.js';
import { MetricsSum } from './metrics.js';
import { splitDataset, type DatasetEvent, type Split, type SplitKind } from './split.js';

/** The tenant id evaluations build and rank under. */
export const EVALUATION_TENANT = 'evaluation';
/** Train events are spread over this many days before now, inside every history window. */
const SPREAD_DAYS = 25;
const DAY_MS = 86_400_000;

/**
 * The serving side of an evaluation, given by the caller (the CLI wires the pipeline in): it takes the
 * train part and the built artifacts and ranks users exactly as the daemon would.
 */
export interface RankingHarness {
  prepare(items: readonly string[], train: readonly DatasetEvent[]): void;
  /** Loads the current version of a model from the evaluation's artifacts. */
  load(dataDir: string, model: ModelName): void;
  recommend(algorithm: string, user: string, count: number): string[];
}

export interface EvaluatedAlgorithm {
  name: string;
  /** Models it ranks from, built by the jobs before it is measured. */
  models: readonly ModelName[];
}

export interface EvaluationOptions {
  dataset: DatasetOptions;
  split: SplitKind;
  seed: number;
  algorithms: readonly EvaluatedAlgorithm[];
  harness: RankingHarness;
  /** Job parameters per model, over each job's defaults. */
  parameters?: Partial<Record<ModelName, object>>;
  k?: number;
  now?: number;
  threads?: number;
  /**
   * A data dir to keep the built models in, each manifest carrying the figures of the algorithms that
   * ranked from it; without it they go to a temporary folder removed at the end.
   */
  keepArtifacts?: string;
}

/** History lengths (train items) of the by-group figures. */
export const HISTORY_GROUPS = [
  { name: '1-5', min: 1, max: 5 },
  { name: '6-20', min: 6, max: 20 },
  { name: '21-100', min: 21, max: 100 },
  { name: '>100', min: 101, max: Infinity },
] as const;

export interface EvaluationRow {
  name: string;
  ndcg: number;
  recall: number;
  hit: number;
  mrr: number;
  coverage: number;
  users: number;
  buildSeconds: number;
  /** NDCG by history length, keyed by group name. */
  ndcgByHistory: Record<string, number>;
}

export interface EvaluationReport {
  dataset: { events: number; users: number; items: number; train: number; valid: number; test: number };
  split: SplitKind;
  seed: number;
  k: number;
  rows: EvaluationRow[];
}

/** Spreads the train part's times over the last SPREAD_DAYS days, keeping their order. */
export function spread(train: readonly DatasetEvent[], now: number): DatasetEvent[] {
  let min = Infinity;
  let max = -Infinity;
  for (const event of train) {
    min = Math.min(min, event.ts);
    max = Math.max(max, event.ts);
  }
  const span = Math.max(max - min, 1);
  const start = now - SPREAD_DAYS * DAY_MS;
  return train.map((event) => ({
    ...event,
    ts: Math.round(start + ((event.ts - min) / span) * SPREAD_DAYS * DAY_MS),
  }));
}

function groupOf(historyLength: number): string {
  return HISTORY_GROUPS.find((group) => historyLength >= group.min && historyLength <= group.max)!.name;
}

/** What a split holds out, by user: the items to mask (train and valid), the test items, train lengths. */
export interface HeldOut {
  known: Map<string, Set<string>>;
  test: Map<string, Set<string>>;
  trainLength: Map<string, number>;
}

function itemsByUser(events: readonly DatasetEvent[]): Map<string, Set<string>> {
  const byUser = new Map<string, Set<string>>();
  for (const event of events) {
    const set = byUser.get(event.user);
    if (set) set.add(event.item);
    else byUser.set(event.user, new Set([event.item]));
  }
  return byUser;
}

export function heldOut(split: Split): HeldOut {
  const trainLength = new Map<string, number>();
  for (const event of split.train) trainLength.set(event.user, (trainLength.get(event.user) ?? 0) + 1);
  return {
    known: itemsByUser([...split.train, ...split.valid]),
    test: itemsByUser(split.test),
    trainLength,
  };
}

/**
 * Scores a ranking over the test users: `rank` is given each user's masked items (train and valid) and
 * answers at most k items none of which is masked.
 */
export function scoreRanking(
  name: string,
  rank: (user: string, known: ReadonlySet<string>, k: number) => string[],
  held: HeldOut,
  k: number,
  catalogSize: number,
  buildSeconds = 0,
): EvaluationRow {
  const all = new MetricsSum();
  const groups = new Map<string, MetricsSum>(HISTORY_GROUPS.map((group) => [group.name, new MetricsSum()]));
  for (const [user, relevant] of held.test) {
    const ranked = rank(user, held.known.get(user) ?? new Set(), k);
    all.add(ranked, relevant, k);
    groups.get(groupOf(held.trainLength.get(user) ?? 0))?.add(ranked, relevant, k);
  }
  const averages = all.averages(catalogSize);
  return {
    name,
    ...averages,
    buildSeconds,
    ndcgByHistory: Object.fromEntries(
      [...groups].map(([group, sum]) => [group, sum.count ? sum.averages(catalogSize).ndcg : NaN]),
    ),
  };
}

/** A row's figures as a manifest records them, named `<algorithm>.<metric>@<k>`. */
function figures(row: EvaluationRow, k: number): Record<string, number> {
  const metrics = { ndcg: row.ndcg, recall: row.recall, hr: row.hit, mrr: row.mrr };
  const named = Object.entries(metrics).map(([metric, value]) => [`${row.name}.${metric}@${k}`, value]);
  return Object.fromEntries([
    ...named,
    [`${row.name}.coverage`, row.coverage],
    [`${row.name}.users`, row.users],
  ]);
}

/**
 * `nextrec evaluate` (docs/batch-models.md, "Evaluation"): splits a dataset, builds the models with the same jobs that
 * build them for the daemon, ranks every test user with the serving pipeline, and measures the lists
 * beside the popularity and item-kNN baselines computed on the same split.
 */
export async function evaluate(
  options: EvaluationOptions,
  progress: (line: string) => void = () => undefined,
): Promise<EvaluationReport> {
  const k = options.k ?? 10;
  const now = options.now ?? Date.now();
  const lake = await LakeDb.scratch();
  const dataDir = options.keepArtifacts ?? mkdtempSync(path.join(tmpdir(), 'nextrec-evaluate-'));
  try {
    const events = await readDataset(lake, options.dataset);
    const split = splitDataset(events, options.split, options.seed);
    const items = [...new Set(events.map((event) => event.item))];
    const train = spread(split.train, now);
    await lake.appendViews(train);
    progress(
      `${events.length} events, ${items.length} items: train ${split.train.length}, valid ${split.valid.length}, test ${split.test.length}`,
    );

    const buildSeconds = new Map<ModelName, number>();
    const versions = new Map<ModelName, number>();
    for (const model of new Set(options.algorithms.flatMap((algorithm) => algorithm.models))) {
      const job = jobFor(model);
      const started = performance.now();
      const built = await job.build(
        lake,
        { ...job.defaults, ...options.parameters?.[model] },
        { now, threads: options.threads ?? 2 },
      );
      const ms = performance.now() - started;
      versions.set(model, publishModel(dataDir, EVALUATION_TENANT, model, built, Math.round(ms)).version);
      buildSeconds.set(model, ms / 1000);
      progress(`built ${model} in ${(ms / 1000).toFixed(1)} s`);
    }
    options.harness.prepare(items, train);
    for (const model of buildSeconds.keys()) options.harness.load(dataDir, model);

    const held = heldOut(split);
    const catalogSize = items.length;
    const rows: EvaluationRow[] = [];
    const baselines: Baseline[] = [popularity(split.train), itemKnn(split.train)];
    for (const baseline of baselines) {
      rows.push(scoreRanking(baseline.name, baseline.rank, held, k, catalogSize));
    }
    for (const algorithm of options.algorithms) {
      const rank = (user: string, masked: ReadonlySet<string>, cut: number) =>
        options.harness
          .recommend(algorithm.name, user, cut + masked.size)
          .filter((item) => !masked.has(item))
          .slice(0, cut);
      const seconds = algorithm.models.reduce((sum, model) => sum + (buildSeconds.get(model) ?? 0), 0);
      const row = scoreRanking(algorithm.name, rank, held, k, catalogSize, seconds);
      rows.push(row);
      progress(`ranked ${algorithm.name}`);
      if (options.keepArtifacts) {
        for (const model of algorithm.models)
          recordEvaluation(dataDir, EVALUATION_TENANT, model, versions.get(model)!, figures(row, k));
      }
    }
    return {
      dataset: {
        events: events.length,
        users: new Set(events.map((event) => event.user)).size,
        items: items.length,
        train: split.train.length,
        valid: split.valid.length,
        test: split.test.length,
      },
      split: options.split,
      seed: options.seed,
      k,
      rows,
    };
  } finally {
    lake.close();
    if (!options.keepArtifacts) rmSync(dataDir, { recursive: true, force: true });
  }
}
