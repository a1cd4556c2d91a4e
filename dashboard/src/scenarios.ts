/** Scenario funnels: impressions → clicks → carts → purchases per scenario, and one scenario by day. */
import { lineChart } from './charts.js';
import { h, table, errorNote } from './dom.js';
import {
  formatCount,
  formatMoney,
  formatPercent,
  funnelSteps,
  toSeries,
  total,
  withQuery,
} from './format.js';
import { chartBox, type Loader } from './panel.js';
import type { DataList, FunnelDay, ScenarioInfo, ScenarioSummary } from './types.js';

interface Row {
  scenario: ScenarioInfo;
  summary?: ScenarioSummary;
  error?: string;
}

/** The funnel as four bars, each as wide as its share of the impressions. */
function funnelBars(summary: ScenarioSummary): HTMLElement {
  return h(
    'div',
    { class: 'funnel', 'aria-hidden': 'true' },
    ...funnelSteps(summary).map((step, i) => {
      const bar = h('div', {
        class: `funnel-bar step-${i}`,
        title: `${step.label}: ${formatCount(step.count)}`,
      });
      // At least a sliver, so that a step with few events is still seen, and at most the whole width
      // (clicks logged without impressions can outnumber them); CSSOM, allowed by the CSP.
      bar.style.width = step.count > 0 ? `${Math.min(100, Math.max(2, step.share * 100))}%` : '0';
      return bar;
    }),
  );
}

function cell(row: Row, value: (s: ScenarioSummary) => string): string {
  return row.summary ? value(row.summary) : '–';
}

/**
 * The scenarios with their funnel; `selected` names the scenario whose daily funnel is shown, and
 * `onSelect` is told the choice once the table is drawn and whenever it changes.
 */
export function scenariosPanel(
  selected: () => string | undefined,
  onSelect: (slug?: string) => void,
): Loader {
  return async ({ api, range, signal }) => {
    const { data: scenarios } = await api.get<DataList<ScenarioInfo>>('/scenarios', signal);
    // One scenario's summary failing shows in its row only.
    const rows: Row[] = await Promise.all(
      scenarios.map(async (scenario): Promise<Row> => {
        const path = withQuery(`/analytics/scenario/${encodeURIComponent(scenario.slug)}/summary`, {
          ...range,
        });
        try {
          return { scenario, summary: await api.get<ScenarioSummary>(path, signal) };
        } catch (error) {
          if (signal.aborted) throw error;
          return { scenario, error: (error as Error).message };
        }
      }),
    );
    return (body) => {
      const current = rows.some((r) => r.scenario.slug === selected()) ? selected() : rows[0]?.scenario.slug;
      const buttons: HTMLButtonElement[] = [];
      const select = (slug: string) => {
        for (const button of buttons) button.setAttribute('aria-pressed', String(button.value === slug));
        onSelect(slug);
      };
      const choose = (row: Row) => {
        const button = h(
          'button',
          {
            type: 'button',
            class: 'link',
            value: row.scenario.slug,
            'aria-pressed': String(row.scenario.slug === current),
            'data-testid': `scenario-select-${row.scenario.slug}`,
          },
          row.scenario.name ? `${row.scenario.name} (${row.scenario.slug})` : row.scenario.slug,
        );
        button.addEventListener('click', () => select(row.scenario.slug));
        buttons.push(button);
        return button;
      };
      const id = (name: string) => (row: Row) => `scenario-${name}-${row.scenario.slug}`;
      body.append(
        table(
          rows,
          [
            { label: 'Scenario', cell: choose },
            { label: 'Logic', cell: (r) => r.scenario.logicType },
            {
              label: 'Impressions',
              numeric: true,
              cell: (r) => cell(r, (s) => formatCount(s.impressions)),
              testId: id('impressions'),
            },
            {
              label: 'Clicks',
              numeric: true,
              cell: (r) => cell(r, (s) => formatCount(s.clicks)),
              testId: id('clicks'),
            },
            {
              label: 'Carts',
              numeric: true,
              cell: (r) => cell(r, (s) => formatCount(s.carts)),
              testId: id('carts'),
            },
            {
              label: 'Purchases',
              numeric: true,
              cell: (r) => cell(r, (s) => formatCount(s.purchases)),
              testId: id('purchases'),
            },
            {
              label: 'CTR',
              numeric: true,
              cell: (r) => cell(r, (s) => formatPercent(s.ctr)),
              testId: id('ctr'),
            },
            {
              label: 'Conversion',
              numeric: true,
              cell: (r) => cell(r, (s) => formatPercent(s.conversion)),
              testId: id('conversion'),
            },
            {
              label: 'Revenue',
              numeric: true,
              cell: (r) => cell(r, (s) => formatMoney(s.revenue)),
              testId: id('revenue'),
            },
            {
              label: 'Funnel',
              cell: (r) => (r.summary ? funnelBars(r.summary) : errorNote(r.error ?? '', id('error')(r))),
            },
          ],
          'scenarios-table',
          'No scenarios yet: create one with POST /scenarios.',
        ),
      );
      onSelect(current);
    };
  };
}

/** One scenario's funnel by day over the range. */
export function funnelPanel(slug: string | undefined): Loader {
  return async ({ api, range, signal }) => {
    if (slug === undefined) return (body) => body.append(h('p', { class: 'empty' }, 'No scenario to show.'));
    const path = withQuery(`/analytics/scenario/${encodeURIComponent(slug)}/funnel-volume`, { ...range });
    const { data } = await api.get<DataList<FunnelDay>>(path, signal);
    return (body) => {
      const { box, canvas } = chartBox('funnel-chart', `Funnel of ${slug} per day`);
      const totalItem = (key: string, text: string) =>
        h(
          'span',
          { class: 'total-item' },
          h('span', { 'data-testid': `funnel-total-${key}` }, text),
          ` ${key}`,
        );
      const totals = [
        ...(['impressions', 'clicks', 'carts', 'purchases'] as const).map((key) =>
          totalItem(key, formatCount(total(data, (d) => d[key]))),
        ),
        totalItem('revenue', formatMoney(total(data, (d) => d.revenue))),
      ];
      body.append(
        h(
          'p',
          { class: 'total' },
          'Scenario ',
          h('strong', { 'data-testid': 'funnel-scenario' }, slug),
          ': ',
          ...totals,
        ),
        box,
      );
      lineChart(
        canvas,
        toSeries(data, [
          { key: 'impressions', label: 'Impressions' },
          { key: 'clicks', label: 'Clicks' },
          { key: 'carts', label: 'Carts' },
          { key: 'purchases', label: 'Purchases' },
        ]),
      );
    };
  };
}
