/**
 * bench/quality: recommendation quality through the daemon's HTTP API (docs/batch-models.md, "Evaluation"). A shared
 * dataset's train part is sent to a real daemon as views spread over the last 25 days, the daemon builds
 * its models by itself, and every test user's user-to-item list is asked over HTTP and scored as
 * `nextrec evaluate` scores it, beside the popularity and item-kNN baselines of the same split.
 *
 *   node dist/bench/quality.js [--datasets movielens,retail] [--algorithms weighted-history,...]
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { itemKnn, popularity, type Baseline } from '../jobs/evaluate/baselines.js';
import { readDataset, type DatasetOptions } from '../jobs/evaluate/dataset.js';
import {
  HISTORY_GROUPS,
  heldOut,
  scoreRanking,
  spread,
  type EvaluationRow,
} from '../jobs/evaluate/evaluate.js';
import { splitDataset, type DatasetEvent } from '../jobs/evaluate/split.js';
import { LakeDb } from '../jobs/lake/lake-db.js';
import { MODEL_NAMES, currentVersion, modelDir } from '../src/artifacts/layout.js';
import { openVersion } from '../src/artifacts/open.js';
import { startChildServer } from './support/child-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DATA = path.resolve(ROOT, '../shared/data');
const OPERATOR_KEY = 'bench-quality-operator-key';
const BATCH = 10_000;

const DATASETS: Record<string, DatasetOptions> = {
  movielens: { file: path.join(DATA, 'movielens-latest-small/ratings.csv') },
  retail: {
    file: path.join(DATA, 'uci-online-retail/online_retail.csv.gz'),
    userColumn: 'CustomerID',
    itemColumn: 'StockCode',
    timeColumn: 'InvoiceDate',
    where: "Quantity > 0 AND UnitPrice > 0 AND NOT starts_with(InvoiceNo::VARCHAR, 'C')",
  },
};

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function send(
  url: string,
  method: string,
  route: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const response = await fetch(`${url}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${route}: ${response.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/**
 * Waits until every model (the scenarios below use them all) was built from all `interactions`, and
 * swapped in.
 */
async function modelsBuilt(dataDir: string, tenantId: string, interactions: number): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const built = MODEL_NAMES.every((model) => {
      const version = currentVersion(modelDir(dataDir, tenantId, model));
      if (version === undefined) return false;
      try {
        return openVersion(dataDir, tenantId, model, version).manifest.source.interactions >= interactions;
      } catch {
        return false;
      }
    });
    if (built) break;
    if (Date.now() > deadline) throw new Error('the daemon did not build its models in 10 minutes');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // The loader looks for new versions every second.
  await new Promise((resolve) => setTimeout(resolve, 2_500));
}

async function measure(datasetName: string, algorithms: string[]): Promise<void> {
  const options = DATASETS[datasetName];
  if (!existsSync(options.file)) {
    console.log(`bench quality ${datasetName}: skipped, ${options.file} is not there`);
    return;
  }
  const lake = await LakeDb.scratch();
  const events = await readDataset(lake, options).finally(() => lake.close());
  const split = splitDataset(events, 'random', 2020);
  const items = [...new Set(events.map((event) => event.item))];
  const train = spread(split.train, Date.now());

  const dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-bench-quality-'));
  const daemon = await startChildServer(
    'daemon',
    [path.join(ROOT, 'bin/run.js'), 'serve', '--port', '0', '--data-dir', dataDir],
    /nextrec listening on (http:\/\/\S+)/,
    { NEXTREC_ADMIN_KEY: OPERATOR_KEY, NEXTREC_LOG_LEVEL: 'warn' },
  );
  try {
    const credentials = await send(
      daemon.url,
      'POST',
      '/tenants',
      { 'x-api-key': OPERATOR_KEY },
      { tenantId: 'q' },
    );
    const headers = { 'x-tenant-id': 'q', 'x-api-key': credentials.apiKey as string };
    // Scenarios first: the daemon builds the models its tenant's scenarios use.
    for (const algorithm of algorithms) {
      await send(daemon.url, 'POST', '/scenarios', headers, {
        slug: `q-${algorithm}`,
        logicType: 'user-to-item',
        algorithm,
      });
    }
    for (let i = 0; i < items.length; i += BATCH) {
      const batch = items.slice(i, i + BATCH).map((externalId) => ({ externalId }));
      await send(daemon.url, 'POST', '/ingestion/items', headers, { items: batch });
    }
    for (let i = 0; i < train.length; i += BATCH) {
      const interactions = train.slice(i, i + BATCH).map((event: DatasetEvent) => ({
        userId: event.user,
        itemId: event.item,
        type: 'view',
        timestamp: new Date(event.ts).toISOString(),
      }));
      await send(daemon.url, 'POST', '/ingestion/interactions', headers, { interactions });
    }
    const started = Date.now();
    await modelsBuilt(dataDir, 'q', split.train.length);
    const buildSeconds = (Date.now() - started) / 1000;

    const held = heldOut(split);
    const rows: EvaluationRow[] = [];
    const baselines: Baseline[] = [popularity(split.train), itemKnn(split.train)];
    for (const baseline of baselines) {
      rows.push(scoreRanking(baseline.name, baseline.rank, held, 10, items.length));
    }
    for (const scenario of [undefined, ...algorithms]) {
      const lists = new Map<string, string[]>();
      let algorithmName = '';
      for (const user of held.test.keys()) {
        const masked = held.known.get(user) ?? new Set<string>();
        const body = await send(daemon.url, 'POST', '/recommendations', headers, {
          ...(scenario ? { scenario: `q-${scenario}` } : { logicType: 'user-to-item' }),
          userId: user,
          count: Math.min(1000, 10 + masked.size),
          noCache: true,
        });
        algorithmName = body.algorithm;
        const ids = (body.items as { itemId: string }[]).map((entry) => entry.itemId);
        lists.set(user, ids.filter((id) => !masked.has(id)).slice(0, 10));
      }
      const name = scenario ? algorithmName : `default (${algorithmName})`;
      rows.push(scoreRanking(name, (user) => lists.get(user) ?? [], held, 10, items.length));
    }
    console.log(
      JSON.stringify(
        {
          bench: 'quality',
          dataset: datasetName,
          modelsBuiltSeconds: buildSeconds,
          // The daemon built its models together; rows have no build time of their own.
          rows: rows.map(({ buildSeconds: _unused, ...row }) => row),
        },
        (_key, value) => (typeof value === 'number' ? Number(value.toFixed(4)) : value),
      ),
    );
    console.log(
      `| ${datasetName}, through HTTP | NDCG@10 | Recall@10 | HR@10 | MRR@10 | coverage | ${HISTORY_GROUPS.map((g) => `NDCG ${g.name}`).join(' | ')} |`,
    );
    console.log(`| --- | --- | --- | --- | --- | --- | ${HISTORY_GROUPS.map(() => '---').join(' | ')} |`);
    for (const row of rows) {
      const cells = [row.ndcg, row.recall, row.hit, row.mrr, row.coverage].map((v) => v.toFixed(4));
      const groups = HISTORY_GROUPS.map((g) =>
        Number.isNaN(row.ndcgByHistory[g.name]) ? '-' : row.ndcgByHistory[g.name].toFixed(3),
      );
      console.log(`| ${row.name} | ${cells.join(' | ')} | ${groups.join(' | ')} |`);
    }
  } finally {
    await daemon.stop().catch((error: Error) => console.error(error.message));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const datasets = (argument('datasets') ?? 'movielens,retail').split(',');
const algorithms = (argument('algorithms') ?? 'weighted-history,matrix-factorization')
  .split(',')
  .filter(Boolean);
for (const name of datasets) await measure(name, algorithms);
