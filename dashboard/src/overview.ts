/** Tenant overview: the store's totals and how much of the catalog recommendations reach. */
import { figure, h } from './dom.js';
import { formatCount, formatMoney, formatPercent, withQuery } from './format.js';
import type { Loader } from './panel.js';
import type { CatalogCoverage, Summary } from './types.js';

export const summaryPanel: Loader = async ({ api, range, signal }) => {
  const summary = await api.get<Summary>(withQuery('/analytics/summary', { ...range }), signal);
  return (body) => {
    body.append(
      h(
        'div',
        { class: 'figures' },
        figure('Items', formatCount(summary.items), 'summary-items'),
        figure('Users', formatCount(summary.users), 'summary-users'),
        figure('Interactions', formatCount(summary.interactions), 'summary-interactions'),
        figure('Impressions', formatCount(summary.impressions), 'summary-impressions'),
        figure('Revenue', formatMoney(summary.revenue), 'summary-revenue'),
        figure('Profit', formatMoney(summary.profit), 'summary-profit'),
      ),
      h(
        'div',
        { class: 'figures small' },
        figure('Views', formatCount(summary.byType?.view ?? 0), 'summary-views'),
        figure('Carts', formatCount(summary.byType?.cart ?? 0), 'summary-carts'),
        figure('Purchases', formatCount(summary.byType?.purchase ?? 0), 'summary-purchases'),
        figure('Ratings', formatCount(summary.byType?.rating ?? 0), 'summary-ratings'),
        figure('Bookmarks', formatCount(summary.byType?.bookmark ?? 0), 'summary-bookmarks'),
      ),
    );
  };
};

export const coveragePanel: Loader = async ({ api, range, signal }) => {
  const coverage = await api.get<CatalogCoverage>(
    withQuery('/analytics/catalog-coverage', { ...range }),
    signal,
  );
  return (body) => {
    const meter = h('div', { class: 'meter-fill' });
    // CSSOM, not a style attribute: allowed by the page's CSP.
    meter.style.width = `${Math.min(100, Math.max(0, coverage.coverage * 100))}%`;
    body.append(
      h(
        'div',
        { class: 'figures' },
        figure('Coverage', formatPercent(coverage.coverage, 1), 'coverage-percent'),
        figure('Recommended items', formatCount(coverage.recommendedItems), 'coverage-recommended'),
        figure('Catalog size', formatCount(coverage.catalogSize), 'coverage-catalog'),
      ),
      h('div', { class: 'meter', role: 'presentation' }, meter),
      h('p', { class: 'hint' }, 'Share of the catalog that appeared in at least one recommendation.'),
    );
  };
};
