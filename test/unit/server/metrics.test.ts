import { describe, expect, it } from 'vitest';
import { Metrics, type MetricSources } from '../../../src/server/metrics.js';

function sources(overrides: Partial<MetricSources> = {}): MetricSources {
  const builtAt = Date.now() - 90_000;
  return {
    writeQueue: () => ({ records: 12, writes: 3, limit: 100, logRows: 4_000 }),
    resultCache: () => ({ hits: 3, misses: 1 }),
    vectorBacklog: () => new Map([['acme', 7]]),
    modelBuilds: () => [
      {
        tenantId: 'acme',
        model: 'cooccurrence',
        builtAt,
        version: 3,
        published: 4,
        refused: 4,
        rowsBehind: 12,
      },
      { tenantId: 'acme', model: 'ease', builtAt: 0, rowsBehind: 40 },
      { tenantId: 'acme', model: 'factors', builtAt: 0 },
    ],
    diskFull: () => false,
    runnerClaims: () => [
      { kind: 'models', tenantId: 'acme' },
      { kind: 'retention', tenantId: '*' },
    ],
    ...overrides,
  };
}

/** The value of the sample named `name` with exactly these labels (as printed), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('Metrics', () => {
  it('counts requests by route pattern, method and status class, with their durations', async () => {
    const metrics = new Metrics(sources(), { processMetrics: false });
    metrics.observeRequest('/catalog/items/:externalId', 'GET', 200, 0.002);
    metrics.observeRequest('/catalog/items/:externalId', 'GET', 204, 0.004);
    metrics.observeRequest('/catalog/items/:externalId', 'GET', 404, 0.001);
    metrics.observeRequest('unmatched', 'POST', 404, 0.0001);
    const { contentType, text } = await metrics.scrape();
    expect(contentType).toContain('text/plain');
    const labels = 'route="/catalog/items/:externalId",method="GET",status_class="2xx"';
    expect(sample(text, 'nextrec_http_request_duration_seconds_count', labels)).toBe(2);
    expect(sample(text, 'nextrec_http_request_duration_seconds_sum', labels)).toBeCloseTo(0.006);
    expect(sample(text, 'nextrec_http_request_duration_seconds_bucket', `le="0.0025",${labels}`)).toBe(1);
    expect(
      sample(
        text,
        'nextrec_http_request_duration_seconds_count',
        'route="unmatched",method="POST",status_class="4xx"',
      ),
    ).toBe(1);
  });

  it('reads the cache, the write queue, model ages, versions and lag, and the vector backlog when scraped', async () => {
    let hits = 3;
    const metrics = new Metrics(sources({ resultCache: () => ({ hits, misses: 1 }) }), {
      processMetrics: false,
    });
    let text = (await metrics.scrape()).text;
    expect(sample(text, 'nextrec_result_cache_hits_total')).toBe(3);
    expect(sample(text, 'nextrec_result_cache_misses_total')).toBe(1);
    expect(sample(text, 'nextrec_result_cache_hit_ratio')).toBe(0.75);
    expect(sample(text, 'nextrec_write_queue_records')).toBe(12);
    expect(sample(text, 'nextrec_write_queue_writes')).toBe(3);
    expect(sample(text, 'nextrec_write_queue_limit_records')).toBe(100);
    expect(sample(text, 'nextrec_interactions_log_rows')).toBe(4_000);
    expect(sample(text, 'nextrec_vector_indexing_backlog_items', 'tenant="acme"')).toBe(7);
    const age = sample(text, 'nextrec_model_age_seconds', 'tenant="acme",model="cooccurrence"');
    expect(age).toBeGreaterThanOrEqual(90);
    expect(sample(text, 'nextrec_model_version', 'tenant="acme",model="cooccurrence"')).toBe(3);
    expect(sample(text, 'nextrec_model_rows_behind', 'tenant="acme",model="cooccurrence"')).toBe(12);
    // Published at 4, which this daemon refused: 3 keeps serving.
    expect(sample(text, 'nextrec_model_version_published', 'tenant="acme",model="cooccurrence"')).toBe(4);
    expect(sample(text, 'nextrec_model_version_refused', 'tenant="acme",model="cooccurrence"')).toBe(4);
    expect(sample(text, 'nextrec_model_version_refused', 'tenant="acme",model="ease"')).toBeUndefined();
    expect(sample(text, 'nextrec_runner_claims', 'kind="models",tenant="acme"')).toBe(1);
    expect(sample(text, 'nextrec_runner_claims', 'kind="retention",tenant="*"')).toBe(1);
    expect(sample(text, 'nextrec_runner_claims', 'kind="feeds",tenant="acme"')).toBeUndefined();
    // A model none of whose versions serves has no age and no version, and is behind by every row.
    expect(sample(text, 'nextrec_model_age_seconds', 'tenant="acme",model="ease"')).toBeUndefined();
    expect(sample(text, 'nextrec_model_version', 'tenant="acme",model="ease"')).toBeUndefined();
    expect(sample(text, 'nextrec_model_rows_behind', 'tenant="acme",model="ease"')).toBe(40);
    // A model the tenant does not use is behind nothing.
    expect(text).not.toContain('model="factors"');
    hits = 9;
    text = (await metrics.scrape()).text;
    expect(sample(text, 'nextrec_result_cache_hits_total')).toBe(9);
    expect(sample(text, 'nextrec_result_cache_hit_ratio')).toBe(0.9);
  });

  it('a cache never asked has a hit ratio of 0', async () => {
    const metrics = new Metrics(sources({ resultCache: () => ({ hits: 0, misses: 0 }) }), {
      processMetrics: false,
    });
    expect(sample((await metrics.scrape()).text, 'nextrec_result_cache_hit_ratio')).toBe(0);
  });

  it('records commits, refused writes, failed log moves, model builds and malformed requests', async () => {
    const metrics = new Metrics(sources(), { processMetrics: false });
    metrics.observeCommit(0.004);
    metrics.observeCommit(0.02);
    metrics.refusedWrite();
    metrics.failedMove();
    metrics.observeBuild(['ease', 'factors'], 12, 'ok');
    metrics.observeBuild(['cooccurrence'], 1, 'failed');
    metrics.malformedRequest('HEADERS_TOO_LARGE');
    const { text } = await metrics.scrape();
    expect(sample(text, 'nextrec_write_commit_duration_seconds_count')).toBe(2);
    expect(sample(text, 'nextrec_write_commit_duration_seconds_bucket', 'le="0.005"')).toBe(1);
    expect(sample(text, 'nextrec_write_queue_refused_total')).toBe(1);
    expect(sample(text, 'nextrec_interactions_log_move_failures_total')).toBe(1);
    expect(sample(text, 'nextrec_model_build_duration_seconds_count', 'model="ease",outcome="ok"')).toBe(1);
    expect(sample(text, 'nextrec_model_build_duration_seconds_sum', 'model="factors",outcome="ok"')).toBe(12);
    expect(
      sample(text, 'nextrec_model_build_duration_seconds_count', 'model="cooccurrence",outcome="failed"'),
    ).toBe(1);
    expect(sample(text, 'nextrec_http_malformed_requests_total', 'code="HEADERS_TOO_LARGE"')).toBe(1);
  });

  it('includes the process metrics (resident memory) by default, in a registry of its own', async () => {
    const first = new Metrics(sources());
    const second = new Metrics(sources());
    expect((await first.scrape()).text).toContain('process_resident_memory_bytes');
    expect((await second.scrape()).text).toContain('process_resident_memory_bytes');
  });
});
