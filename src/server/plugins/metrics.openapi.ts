import type { Operations } from '../openapi/operation.js';

/**
 * What the OpenAPI document says of the routes of metrics.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /metrics': {
    id: 'metrics',
    tag: 'Operations',
    summary: 'Metrics',
    description:
      'Prometheus text format: requests and latency per route, cache hit ratio, write queue depth and commit latency, model build durations, ages, the versions serving and the rows they were not built from, vector backlog, process memory. Operator key, or no credentials on `--metrics-port`.',
    mediaType: 'text/plain; version=0.0.4',
    answer: [
      '# HELP nextrec_http_request_duration_seconds HTTP requests by route pattern, method and status class: their count and how long they took',
      '# TYPE nextrec_http_request_duration_seconds histogram',
      'nextrec_http_request_duration_seconds_count{route="/recommendations",method="POST",status_class="2xx"} 1842',
      '# HELP nextrec_model_age_seconds Seconds since the loaded version of each model was built, by tenant and model',
      '# TYPE nextrec_model_age_seconds gauge',
      'nextrec_model_age_seconds{tenant="acme",model="cooccurrence"} 42.5',
      '# HELP nextrec_model_rows_behind Rows of each tenant the serving version of each model it uses was not built from: interactions (vectors: items)',
      '# TYPE nextrec_model_rows_behind gauge',
      'nextrec_model_rows_behind{tenant="acme",model="cooccurrence"} 0',
      '',
    ].join('\n'),
  },
};
