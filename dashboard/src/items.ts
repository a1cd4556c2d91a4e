/**
 * The items users act on most, the items recommendations show most with their funnel rates, and the
 * algorithms that answered with the impressions and clicks their answers caused.
 */
import { table, type Column } from './dom.js';
import { formatCount, formatPercent, withQuery } from './format.js';
import type { Loader } from './panel.js';
import type { AlgorithmFigures, DataList, TopItem, TopRecommended } from './types.js';

const LIMIT = 10;

/** Rows with their rank, so that cells get stable test ids whatever the item ids contain. */
function ranked<T>(rows: T[]): (T & { rank: number })[] {
  return rows.map((row, i) => ({ ...row, rank: i + 1 }));
}

/** A panel that is one table of what an analytics list route answers for the range. */
function listPanel<T, R = T>(
  route: string,
  query: Record<string, number>,
  rows: (data: T[]) => R[],
  columns: readonly Column<R>[],
  testId: string,
  empty: string,
): Loader {
  return async ({ api, range, signal }) => {
    const { data } = await api.get<DataList<T>>(withQuery(route, { ...query, ...range }), signal);
    return (body) => body.append(table(rows(data), columns, testId, empty));
  };
}

export const topItemsPanel = listPanel<TopItem, TopItem & { rank: number }>(
  '/analytics/top-items',
  { limit: LIMIT },
  ranked,
  [
    { label: '#', numeric: true, cell: (r) => String(r.rank) },
    { label: 'Item', cell: (r) => r.itemId, testId: (r) => `top-items-id-${r.rank}` },
    {
      label: 'Interactions',
      numeric: true,
      cell: (r) => formatCount(r.count),
      testId: (r) => `top-items-count-${r.rank}`,
    },
  ],
  'top-items-table',
  'No interactions in this range.',
);

export const topRecommendedPanel = listPanel<TopRecommended, TopRecommended & { rank: number }>(
  '/analytics/top-recommended',
  { limit: LIMIT },
  ranked,
  [
    { label: '#', numeric: true, cell: (r) => String(r.rank) },
    { label: 'Item', cell: (r) => r.itemId, testId: (r) => `top-recommended-id-${r.rank}` },
    {
      label: 'Impressions',
      numeric: true,
      cell: (r) => formatCount(r.impressions),
      testId: (r) => `top-recommended-impressions-${r.rank}`,
    },
    { label: 'Clicks', numeric: true, cell: (r) => formatCount(r.clicks) },
    { label: 'Carts', numeric: true, cell: (r) => formatCount(r.carts) },
    { label: 'Purchases', numeric: true, cell: (r) => formatCount(r.purchases) },
    { label: 'CTR', numeric: true, cell: (r) => formatPercent(r.ctr) },
    { label: 'Conversion', numeric: true, cell: (r) => formatPercent(r.conversion) },
  ],
  'top-recommended-table',
  'No recommendations shown in this range.',
);

export const algorithmsPanel = listPanel<AlgorithmFigures>(
  '/analytics/algorithms',
  {},
  (data) => data,
  [
    { label: 'Algorithm', cell: (r) => r.algorithm },
    {
      label: 'Answers',
      numeric: true,
      cell: (r) => formatCount(r.answers),
      testId: (r) => `algorithms-answers-${r.algorithm}`,
    },
    { label: 'Impressions', numeric: true, cell: (r) => formatCount(r.impressions) },
    { label: 'Clicks', numeric: true, cell: (r) => formatCount(r.clicks) },
    { label: 'CTR', numeric: true, cell: (r) => formatPercent(r.ctr) },
  ],
  'algorithms-table',
  'No answers in this range.',
);
