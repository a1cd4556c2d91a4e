import { describe, expect, it } from 'vitest';
import {
  authHeaders,
  checkRange,
  defaultRange,
  describeError,
  formatCount,
  formatInterval,
  formatMoney,
  formatMoneyInterval,
  formatPValue,
  formatPercent,
  funnelSteps,
  looksLikeJwt,
  parseErrorBody,
  toSeries,
  total,
  verdict,
  withQuery,
} from '../../../dashboard/src/format.js';

describe('dashboard formatting', () => {
  it('formats sums of prices with two decimals, and their intervals signed', () => {
    expect(formatMoney(1234.5)).toBe('1,234.50');
    expect(formatMoney(0)).toBe('0.00');
    expect(formatMoney(-3.456)).toBe('-3.46');
    expect(formatMoney(undefined)).toBe('–');
    expect(formatMoneyInterval([-1.5, 20])).toBe('[-1.50, +20.00]');
    expect(formatMoneyInterval(null)).toBe('–');
  });

  it('formats counts the same in every locale', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(1234567)).toBe('1,234,567');
  });

  it('shows fractions as percentages, signed on demand', () => {
    expect(formatPercent(0.1234)).toBe('12.34%');
    expect(formatPercent(0.5, 1)).toBe('50.0%');
    expect(formatPercent(0.05, 1, true)).toBe('+5.0%');
    expect(formatPercent(-0.05, 1, true)).toBe('-5.0%');
    expect(formatPercent(null)).toBe('–');
    expect(formatPercent(Number.NaN)).toBe('–');
  });

  it('shows p-values, intervals and a verdict in plain words', () => {
    expect(formatPValue(0.03125)).toBe('0.0313');
    expect(formatPValue(0.00001)).toBe('< 0.0001');
    expect(formatPValue(null)).toBe('–');
    expect(formatInterval([-0.012, 0.034])).toBe('[-1.20%, +3.40%]');
    expect(formatInterval(null)).toBe('–');
    expect(verdict(0.049)).toBe('significant at 95%');
    expect(verdict(0.05)).toBe('not significant yet');
    expect(verdict(0.4)).toBe('not significant yet');
    expect(verdict(null)).toBe('not enough data yet');
  });
});

describe('dashboard date range', () => {
  it('defaults to the last 30 UTC days, today included', () => {
    expect(defaultRange(new Date('2024-03-10T23:30:00Z'))).toEqual({ from: '2024-02-10', to: '2024-03-10' });
    expect(defaultRange(new Date('2024-01-01T00:00:00Z'), 1)).toEqual({
      from: '2024-01-01',
      to: '2024-01-01',
    });
  });

  it('checks a typed range', () => {
    expect(checkRange({ from: '2024-01-01', to: '2024-01-31' })).toBeUndefined();
    expect(checkRange({ from: '2024-01-01', to: '2024-01-01' })).toBeUndefined();
    expect(checkRange({ from: '2024-02-01', to: '2024-01-31' })).toMatch(/after/);
    expect(checkRange({ from: '', to: '2024-01-31' })).toMatch(/start/);
    expect(checkRange({ from: '2024-01-01', to: 'soon' })).toMatch(/end/);
  });

  it('builds query strings, leaving undefined values out', () => {
    expect(withQuery('/a', { from: '2024-01-01', to: '2024-01-31', limit: 10 })).toBe(
      '/a?from=2024-01-01&to=2024-01-31&limit=10',
    );
    expect(withQuery('/a', { limit: undefined })).toBe('/a');
  });
});

describe('dashboard credentials', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2lnbmF0dXJl-_';

  it('tells a JWT from an API key', () => {
    expect(looksLikeJwt(jwt)).toBe(true);
    expect(looksLikeJwt('nr_api_0123456789abcdef')).toBe(false);
    expect(looksLikeJwt('a.b')).toBe(false);
    expect(looksLikeJwt('a.b.c.d')).toBe(false);
    expect(looksLikeJwt('a+b.c.d')).toBe(false);
  });

  it('sends an API key as X-Api-Key and a JWT as a bearer token', () => {
    expect(authHeaders({ tenantId: ' demo ', secret: 'key-123' })).toEqual({
      'X-Tenant-Id': 'demo',
      'X-Api-Key': 'key-123',
    });
    expect(authHeaders({ tenantId: 'demo', secret: ` ${jwt}\n` })).toEqual({
      'X-Tenant-Id': 'demo',
      Authorization: `Bearer ${jwt}`,
    });
  });
});

describe('dashboard errors', () => {
  it('reads the project error body, or anything else', () => {
    const body = JSON.stringify({
      statusCode: 401,
      code: 'UNAUTHORIZED',
      error: 'Unauthorized',
      message: 'bad',
    });
    expect(parseErrorBody(401, body)).toEqual({ status: 401, code: 'UNAUTHORIZED', message: 'bad' });
    expect(parseErrorBody(502, '<html>')).toEqual({ status: 502 });
  });

  it('says what went wrong in words', () => {
    expect(describeError({ status: 401, code: 'UNAUTHORIZED', message: 'invalid credentials' })).toBe(
      'The credentials were refused (UNAUTHORIZED: invalid credentials).',
    );
    expect(describeError({ status: 401 })).toBe('The credentials were refused.');
    expect(describeError({ status: 404, code: 'NOT_FOUND', message: 'route GET /x not found' })).toMatch(
      /^Not available on this server/,
    );
    expect(describeError({ status: 0 })).toBe('The server could not be reached.');
    expect(describeError({ status: 500 })).toBe('The server failed (HTTP 500).');
    expect(describeError({ status: 200, message: 'the answer is not JSON' })).toMatch(/could not be read/);
  });
});

describe('dashboard data shapes', () => {
  it('totals rows', () => {
    expect(total([{ count: 2 }, { count: 3 }], (r) => r.count)).toBe(5);
    expect(total([], () => 1)).toBe(0);
  });

  it('turns a scenario summary into funnel steps with shares of the impressions', () => {
    const steps = funnelSteps({
      impressions: 200,
      clicks: 50,
      carts: 10,
      purchases: 5,
      ctr: 0.25,
      conversion: 0.025,
      revenue: 99.5,
    });
    expect(steps.map((s) => [s.label, s.count, s.share])).toEqual([
      ['Impressions', 200, 1],
      ['Clicks', 50, 0.25],
      ['Carts', 10, 0.05],
      ['Purchases', 5, 0.025],
    ]);
    expect(
      funnelSteps({ impressions: 0, clicks: 0, carts: 0, purchases: 0, ctr: 0, conversion: 0, revenue: 0 })[1]
        .share,
    ).toBe(0);
  });

  it('turns daily rows into chart series', () => {
    const rows = [
      { date: '2024-01-01', impressions: 3, clicks: 1 },
      { date: '2024-01-02', impressions: 0, clicks: 0 },
    ];
    expect(
      toSeries(rows, [
        { key: 'impressions', label: 'Impressions' },
        { key: 'clicks', label: 'Clicks' },
      ]),
    ).toEqual({
      labels: ['2024-01-01', '2024-01-02'],
      datasets: [
        { label: 'Impressions', data: [3, 0] },
        { label: 'Clicks', data: [1, 0] },
      ],
    });
  });
});
