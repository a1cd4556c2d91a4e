/** Interaction volume by day and by type over the selected range. */
import { lineChart, doughnutChart } from './charts.js';
import { h } from './dom.js';
import { formatCount, toSeries, total, withQuery } from './format.js';
import { chartBox, type Loader } from './panel.js';
import type { DataList, TypeCount, VolumeDay } from './types.js';

export const volumePanel: Loader = async ({ api, range, signal }) => {
  const { data } = await api.get<DataList<VolumeDay>>(
    withQuery('/analytics/interaction-volume', { ...range }),
    signal,
  );
  return (body) => {
    const { box, canvas } = chartBox('volume-chart', 'Interactions per day');
    body.append(
      h(
        'p',
        { class: 'total' },
        h('span', { 'data-testid': 'volume-total' }, formatCount(total(data, (d) => d.count))),
        ` interactions over ${data.length} days`,
      ),
      box,
    );
    lineChart(canvas, toSeries(data, [{ key: 'count', label: 'Interactions' }]));
  };
};

export const byTypePanel: Loader = async ({ api, range, signal }) => {
  const { data } = await api.get<DataList<TypeCount>>(
    withQuery('/analytics/interactions-by-type', { ...range }),
    signal,
  );
  return (body) => {
    const { box, canvas } = chartBox('by-type-chart', 'Interactions by type');
    body.append(
      h(
        'p',
        { class: 'total' },
        h('span', { 'data-testid': 'by-type-total' }, formatCount(total(data, (d) => d.count))),
        ' interactions',
      ),
      box,
    );
    doughnutChart(
      canvas,
      data.map((d) => d.type),
      data.map((d) => d.count),
    );
  };
};
