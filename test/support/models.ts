import { expect } from 'vitest';
import { OPERATOR_KEY, call } from './daemon-process.js';
import { eventually } from './eventually.js';

/** The samples of the metric `name` in the daemon's `GET /metrics`, by their labels as printed. */
export async function metricSamples(url: string, name: string): Promise<Map<string, number>> {
  const response = await call<string>(url, 'GET', '/metrics', { headers: { 'x-api-key': OPERATOR_KEY } });
  expect(response.status).toBe(200);
  const samples = new Map<string, number>();
  for (const line of response.body.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] === name) samples.set(match[2] ?? '', Number(match[3]));
  }
  return samples;
}

/**
 * The version of the tenant's model that serves, and the rows it was not built from (docs/configuration.md, "Health and metrics"); each undefined when the daemon has none.
 */
export async function modelProgress(
  url: string,
  tenantId: string,
  model = 'cooccurrence',
): Promise<{ version?: number; rowsBehind?: number }> {
  const labels = `tenant="${tenantId}",model="${model}"`;
  const [versions, behind] = await Promise.all([
    metricSamples(url, 'nextrec_model_version'),
    metricSamples(url, 'nextrec_model_rows_behind'),
  ]);
  return { version: versions.get(labels), rowsBehind: behind.get(labels) };
}

/**
 * Waits until the daemon serves a version of the tenant's `model` built from every interaction the tenant
 * has, however long its build takes on a busy machine; resolves to that version. Only what the test wrote
 * before the call counts: a write answered 2xx is in the tenant's count at once.
 */
export async function modelCaughtUp(url: string, tenantId: string, model = 'cooccurrence'): Promise<number> {
  let version = 0;
  await eventually(async () => {
    const progress = await modelProgress(url, tenantId, model);
    expect(progress, `the ${model} model of '${tenantId}'`).toEqual({
      version: expect.any(Number),
      rowsBehind: 0,
    });
    version = progress.version!;
  });
  return version;
}

/**
 * Waits until every tenant's `model` serving was built from every interaction the tenant has: no build of
 * it is due for any tenant (the builds of a model wait in one line, a tenant at a time: docs/batch-models.md).
 */
export async function everyModelCaughtUp(url: string, model = 'cooccurrence'): Promise<void> {
  await eventually(async () => {
    const behind = [...(await metricSamples(url, 'nextrec_model_rows_behind'))].filter(
      ([labels, rows]) => labels.endsWith(`model="${model}"`) && rows > 0,
    );
    expect(behind, `${model} models behind their tenants' interactions`).toEqual([]);
  });
}

/** Waits until no tenant has items waiting for a vector (`nextrec_vector_indexing_backlog_items`). */
export async function vectorsIndexed(url: string): Promise<void> {
  await eventually(async () => {
    const waiting = [...(await metricSamples(url, 'nextrec_vector_indexing_backlog_items'))];
    expect(
      waiting.filter(([, items]) => items > 0),
      'items waiting for a vector, by tenant',
    ).toEqual([]);
  });
}

/** Waits until the daemon is ready (`GET /health/ready` 200): the models built before its start are loaded. */
export async function daemonReady(url: string): Promise<void> {
  await eventually(async () => {
    const response = await call(url, 'GET', '/health/ready');
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });
}
