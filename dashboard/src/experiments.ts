/**
 * A/B experiments: each variant's rates and revenue, and how sure the differences with the first variant
 * are (CTR by a z-test, revenue per user by Welch's t-test).
 */
import { errorNote, h, table } from './dom.js';
import {
  formatCount,
  formatInterval,
  formatMoney,
  formatMoneyInterval,
  formatPValue,
  formatPercent,
  verdict,
} from './format.js';
import type { Loader } from './panel.js';
import type { DataList, Experiment, ExperimentResults, RevenueSignificance, VariantResult } from './types.js';

/**
 * The verdict on a variant's difference with the first: 'baseline' for the first, else a badge, marked good
 * below p 0.05, with `title` giving its hover text.
 */
function verdictBadge(
  comparison: RevenueSignificance | null,
  title?: (comparison: RevenueSignificance) => string,
): HTMLElement | string {
  if (comparison === null) return 'baseline';
  return h(
    'span',
    { class: (comparison.pValue ?? 1) < 0.05 ? 'badge good' : 'badge', title: title?.(comparison) },
    verdict(comparison.pValue),
  );
}

function resultsTable(experiment: Experiment, variants: VariantResult[]): HTMLElement {
  const id = (name: string) => (v: VariantResult) => `experiment-${experiment.slug}-${name}-${v.scenario}`;
  return table(
    variants,
    [
      {
        label: 'Variant',
        cell: (v) => (v.significance === null ? `${v.scenario} (control)` : v.scenario),
      },
      { label: 'Users', numeric: true, cell: (v) => formatCount(v.users) },
      {
        label: 'Impressions',
        numeric: true,
        cell: (v) => formatCount(v.impressions),
        testId: id('impressions'),
      },
      { label: 'Clicks', numeric: true, cell: (v) => formatCount(v.clicks) },
      { label: 'Purchases', numeric: true, cell: (v) => formatCount(v.purchases) },
      { label: 'CTR', numeric: true, cell: (v) => formatPercent(v.ctr), testId: id('ctr') },
      {
        label: 'Conversion',
        numeric: true,
        cell: (v) => formatPercent(v.conversion),
        testId: id('conversion'),
      },
      {
        label: 'CTR lift',
        numeric: true,
        cell: (v) => formatPercent(v.significance?.lift, 1, true),
        testId: id('lift'),
      },
      {
        label: 'p-value',
        numeric: true,
        cell: (v) => formatPValue(v.significance?.pValue),
        testId: id('pvalue'),
      },
      {
        label: '95% interval of the CTR difference',
        numeric: true,
        cell: (v) => formatInterval(v.significance?.difference95),
        testId: id('interval'),
      },
      {
        label: 'Verdict',
        cell: (v) => verdictBadge(v.significance),
        testId: id('verdict'),
      },
      { label: 'Revenue', numeric: true, cell: (v) => formatMoney(v.revenue), testId: id('revenue') },
      {
        label: 'Revenue / user',
        numeric: true,
        cell: (v) => formatMoney(v.revenuePerUser),
        testId: id('revenue-per-user'),
      },
      {
        label: 'Revenue / user lift',
        numeric: true,
        cell: (v) => formatPercent(v.revenueSignificance?.lift, 1, true),
        testId: id('revenue-lift'),
      },
      {
        label: 'Revenue p-value',
        numeric: true,
        cell: (v) => formatPValue(v.revenueSignificance?.pValue),
        testId: id('revenue-pvalue'),
      },
      {
        label: 'Revenue verdict',
        // The interval in the hover text: the table is wide enough already.
        cell: (v) =>
          verdictBadge(
            v.revenueSignificance,
            (revenue) =>
              `95% interval of the revenue per user difference: ${formatMoneyInterval(revenue.difference95)}`,
          ),
        testId: id('revenue-verdict'),
      },
    ],
    `experiment-results-${experiment.slug}`,
    'No variants.',
  );
}

export const experimentsPanel: Loader = async ({ api, signal }) => {
  const { data: experiments } = await api.get<DataList<Experiment>>('/experiments', signal);
  // Results are read per experiment; one failing shows in its own block.
  const results = await Promise.all(
    experiments.map(async (experiment) => {
      try {
        const path = `/experiments/${encodeURIComponent(experiment.slug)}/results`;
        return { experiment, results: await api.get<ExperimentResults>(path, signal) };
      } catch (error) {
        if (signal.aborted) throw error;
        return { experiment, error: (error as Error).message };
      }
    }),
  );
  return (body) => {
    if (results.length === 0) {
      body.append(h('p', { class: 'empty', 'data-testid': 'experiments-empty' }, 'No experiments yet.'));
      return;
    }
    body.append(
      ...results.map(({ experiment, results: answer, error }) =>
        h(
          'article',
          { class: 'experiment', 'data-testid': `experiment-${experiment.slug}` },
          h(
            'header',
            {},
            h('h3', {}, experiment.slug),
            h('span', { class: `badge status-${experiment.status}` }, experiment.status),
            h(
              'span',
              { class: 'hint' },
              `base ${experiment.baseScenario}; split `,
              experiment.variants.map((v) => `${v.scenario} ${v.weight}`).join(' / '),
            ),
          ),
          answer
            ? resultsTable(experiment, answer.variants)
            : errorNote(error ?? '', `experiment-${experiment.slug}-error`),
        ),
      ),
    );
  };
};
