import { describe, expect, it } from 'vitest';
import {
  buildsSince,
  describeBuilds,
  gaugeValue,
  histogramTotals,
  parseModelBuilds,
  totalsSince,
} from '../../../bench/support/daemon-metrics.js';

const metrics = (okCount: number, okSum: number) =>
  [
    '# HELP nextrec_model_build_duration_seconds Model builds',
    '# TYPE nextrec_model_build_duration_seconds histogram',
    'nextrec_model_build_duration_seconds_bucket{le="1",model="cooccurrence",outcome="ok"} 0',
    `nextrec_model_build_duration_seconds_sum{model="cooccurrence",outcome="ok"} ${okSum}`,
    `nextrec_model_build_duration_seconds_count{model="cooccurrence",outcome="ok"} ${okCount}`,
    'nextrec_model_build_duration_seconds_sum{model="ease",outcome="failed"} 3.5',
    'nextrec_model_build_duration_seconds_count{model="ease",outcome="failed"} 1',
    'nextrec_write_commit_duration_seconds_bucket{le="0.01"} 10',
    'nextrec_write_commit_duration_seconds_sum 0.06',
    'nextrec_write_commit_duration_seconds_count 12',
    'nodejs_eventloop_lag_max_seconds 0.0213',
    'nodejs_eventloop_lag_max_seconds_total 3',
  ].join('\n');

describe('parseModelBuilds', () => {
  it('reads the count and the seconds of each model and outcome', () => {
    expect(parseModelBuilds(metrics(3, 7.25))).toEqual([
      { model: 'cooccurrence', outcome: 'ok', count: 3, seconds: 7.25 },
      { model: 'ease', outcome: 'failed', count: 1, seconds: 3.5 },
    ]);
  });
});

describe('buildsSince', () => {
  it('gives what ran since, leaving out what did not', () => {
    const since = buildsSince(parseModelBuilds(metrics(5, 10.25)), parseModelBuilds(metrics(3, 7.25)));
    expect(since).toEqual([{ model: 'cooccurrence', outcome: 'ok', count: 2, seconds: 3 }]);
    expect(describeBuilds(since)).toBe('cooccurrence ×2');
  });

  it('counts a model first seen since in full', () => {
    const since = buildsSince(parseModelBuilds(metrics(1, 2)), []);
    expect(describeBuilds(since)).toBe('cooccurrence, ease (failed)');
    expect(describeBuilds([])).toBe('none');
  });
});

describe('histogramTotals', () => {
  it('reads a histogram without labels, and leaves out the others', () => {
    expect(histogramTotals(metrics(1, 1), 'nextrec_write_commit_duration_seconds')).toEqual([
      { labels: {}, count: 12, sum: 0.06 },
    ]);
    expect(histogramTotals(metrics(1, 1), 'nextrec_http_request_duration_seconds')).toEqual([]);
  });

  it('tells what counted since, by labels', () => {
    const name = 'nextrec_model_build_duration_seconds';
    const since = totalsSince(histogramTotals(metrics(4, 9), name), histogramTotals(metrics(1, 2), name));
    expect(since).toEqual([{ labels: { model: 'cooccurrence', outcome: 'ok' }, count: 3, sum: 7 }]);
  });
});

describe('gaugeValue', () => {
  it('reads a gauge by its whole name', () => {
    expect(gaugeValue(metrics(1, 1), 'nodejs_eventloop_lag_max_seconds')).toBe(0.0213);
    expect(gaugeValue(metrics(1, 1), 'nodejs_eventloop_lag_p99_seconds')).toBeUndefined();
  });
});
