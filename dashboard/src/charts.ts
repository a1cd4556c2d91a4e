/**
 * Chart.js, with only the pieces the dashboard draws registered (the bundler leaves the rest out).
 * Charts draw on canvas and set their sizes through the CSSOM, which the page's CSP (style-src 'self')
 * allows; animations are off so that what a screenshot shows is the final chart.
 */
import {
  ArcElement,
  CategoryScale,
  Chart,
  DoughnutController,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import type { Series } from './format.js';

Chart.register(
  ArcElement,
  CategoryScale,
  DoughnutController,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
);

/** One palette for every chart, so that a metric keeps its color from chart to chart. */
export const PALETTE = ['#2563eb', '#16a34a', '#f59e0b', '#dc2626', '#7c3aed', '#0891b2'];

const charts = new WeakMap<HTMLCanvasElement, Chart>();

function draw(canvas: HTMLCanvasElement, config: ChartConfiguration): void {
  charts.get(canvas)?.destroy();
  charts.set(canvas, new Chart(canvas, config));
}

const COMMON = {
  animation: false,
  responsive: true,
  maintainAspectRatio: false,
} as const;

/** Dates along x, one line per series (counts, so y starts at 0). */
export function lineChart(canvas: HTMLCanvasElement, series: Series): void {
  draw(canvas, {
    type: 'line',
    data: {
      labels: series.labels,
      datasets: series.datasets.map((set, i) => ({
        ...set,
        borderColor: PALETTE[i % PALETTE.length],
        backgroundColor: PALETTE[i % PALETTE.length],
        pointRadius: 2,
        tension: 0.2,
      })),
    },
    options: {
      ...COMMON,
      interaction: { mode: 'index', intersect: false },
      scales: {
        // Days as MM-DD along x (the range's year is in the form above).
        x: {
          ticks: {
            maxRotation: 0,
            autoSkipPadding: 8,
            callback(value) {
              return this.getLabelForValue(Number(value)).slice(5);
            },
          },
        },
        y: { beginAtZero: true, ticks: { precision: 0 } },
      },
      plugins: { legend: { display: series.datasets.length > 1 } },
    },
  });
}

/** Shares of a whole, one slice per label. */
export function doughnutChart(canvas: HTMLCanvasElement, labels: string[], data: number[]): void {
  draw(canvas, {
    type: 'doughnut',
    data: {
      labels,
      datasets: [{ data, backgroundColor: labels.map((_, i) => PALETTE[i % PALETTE.length]) }],
    },
    options: { ...COMMON, plugins: { legend: { position: 'right' } } },
  });
}

/** Removes every chart drawn inside `root` (on sign-out). */
export function destroyCharts(root: ParentNode): void {
  for (const canvas of root.querySelectorAll('canvas')) {
    charts.get(canvas)?.destroy();
    charts.delete(canvas);
  }
}
